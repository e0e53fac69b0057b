"""What `biorab models ls` shows: the known models and every prepared folder under ``<cache>/models``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from biorab.generation.prepare import KNOWN_MODELS, models_root, read_marker


@dataclass(frozen=True)
class ModelStatus:
    """One row of `biorab models ls`."""

    name: str
    prepared: bool
    path: str
    description: str
    source_sha256: str | None = None
    size_bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def list_models(cache_dir: str | Path | None = None) -> list[ModelStatus]:
    """Known models (prepared or not), then any other prepared folders found in the cache, by name."""
    root = models_root(cache_dir)
    rows = [_status(name, root / m.folder, m.description) for name, m in sorted(KNOWN_MODELS.items())]
    known_folders = {m.folder for m in KNOWN_MODELS.values()}
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if folder.name not in known_folders and read_marker(folder) is not None:
                rows.append(_status(folder.name, folder, "prepared folder (not a built-in model)"))
    return rows


def _status(name: str, folder: Path, description: str) -> ModelStatus:
    marker = read_marker(folder)
    if marker is None:
        return ModelStatus(name=name, prepared=False, path=str(folder), description=description)
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return ModelStatus(
        name=name,
        prepared=True,
        path=str(folder),
        description=description,
        source_sha256=marker.get("source_sha256"),
        size_bytes=size,
    )
