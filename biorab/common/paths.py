"""Where data, caches and runs live. Every location can be overridden by an option or an environment
variable, so tests and CI point them at temporary folders and never write into `../shared`."""

from __future__ import annotations

import os
from pathlib import Path

from biorab.common.errors import ConfigError

_REPO_ROOT = Path(__file__).resolve().parents[2]


def _first_existing(candidates: list[Path]) -> Path | None:
    return next((c for c in candidates if c.is_dir()), None)


def _shared_data_candidates(sub: str) -> list[Path]:
    # Last: where `biorab data fetch` puts the data by default, so fetched data is found with no option.
    return [Path.cwd() / "data" / sub, _REPO_ROOT / "data" / sub, _REPO_ROOT.parent / "shared" / "data" / sub,
            fetched_data_dir() / sub]


def fetched_data_dir() -> Path:
    """Where `biorab data fetch` writes by default (not created here): ``$XDG_DATA_HOME/biorab/data``,
    i.e. ``~/.local/share/biorab/data``. It holds ``biorab/``, ``drugmechdb/`` and ``drugmechcf/``."""
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "biorab" / "data"


def biorab_data_dir(override: str | Path | None = None) -> Path:
    """The BioRAB data root: `override`, else ``$BIORAB_DATA_DIR``, else ``./data/biorab``, the
    ``shared/data/biorab`` folder beside the checkout, or the fetched default (`fetched_data_dir`)."""
    return _resolve("biorab", override, "BIORAB_DATA_DIR", "--data-dir")


def drugmechdb_dir(override: str | Path | None = None) -> Path:
    """The DrugMechDB folder (``indication_paths.yaml``): `override`, ``$BIORAB_DRUGMECHDB_DIR`` or beside
    the checkout."""
    return _resolve("drugmechdb", override, "BIORAB_DRUGMECHDB_DIR", "--drugmechdb-dir")


def drugmechcf_dir(override: str | Path | None = None) -> Path:
    """The Drug Mechanisms Counterfactuals release folder: `override`, ``$BIORAB_DRUGMECHCF_DIR`` or beside
    the checkout."""
    return _resolve("drugmechcf", override, "BIORAB_DRUGMECHCF_DIR", "--drugmechcf-dir")


def _resolve(sub: str, override: str | Path | None, env: str, option: str) -> Path:
    chosen = override or os.environ.get(env)
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_dir():
            raise ConfigError(f"data folder {path} does not exist", key=option)
        return path
    found = _first_existing(_shared_data_candidates(sub))
    if found is None:
        raise ConfigError(
            f"no {sub} data folder found (looked beside the checkout and in {fetched_data_dir()}); "
            f"run `biorab data fetch {sub}`, pass {option} or set ${env}",
            key=option,
        )
    return found


def cache_dir(override: str | Path | None = None) -> Path:
    """Cache root for indexes, embeddings, converted models and generations (created on demand):
    `override`, ``$BIORAB_CACHE_DIR``, else ``$XDG_CACHE_HOME/biorab`` (``~/.cache/biorab``)."""
    chosen = override or os.environ.get("BIORAB_CACHE_DIR")
    if chosen:
        path = Path(chosen).expanduser()
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(xdg) / "biorab"
    path.mkdir(parents=True, exist_ok=True)
    return path
