"""Write a corpus folder (``corpus.jsonl`` in BEIR's shape, ``ledger.jsonl``, ``manifest.json``) and read
it back, checking every line and the digest."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.corpora.corpus import Corpus, Ledger, LedgerEntry, canonical_jsonl, items_from_rows

CORPUS_FILE = "corpus.jsonl"
LEDGER_FILE = "ledger.jsonl"
MANIFEST_FILE = "manifest.json"


def write_corpus(corpus: Corpus, ledger: Ledger, folder: str | Path) -> Path:
    """Write the three files into `folder` (created if needed) and return it.

    ``corpus.jsonl`` holds exactly the bytes the digest is taken over, so the same spec and seed always
    produce byte-identical files.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CORPUS_FILE).write_bytes(canonical_jsonl(corpus.items))
    (folder / LEDGER_FILE).write_bytes(ledger.to_jsonl())
    manifest = json.dumps(corpus.manifest(ledger), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    (folder / MANIFEST_FILE).write_text(manifest, encoding="utf-8")
    return folder


def read_corpus(folder: str | Path) -> tuple[Corpus, Ledger]:
    """Read a folder written by `write_corpus`; a malformed line or a digest mismatch is a `DataError`."""
    folder = Path(folder)
    manifest_path = folder / MANIFEST_FILE
    manifest = _read_json(manifest_path)
    rows = read_json_lines(folder / CORPUS_FILE, ("_id", "text", "metadata"))
    for line, row in enumerate(rows, start=1):
        _check_metadata(folder / CORPUS_FILE, line, row)
    ledger_rows = read_json_lines(folder / LEDGER_FILE, ("item_id", "original", "corrupted", "how"))
    corpus = Corpus(
        kind=str(manifest.get("kind")),
        dataset=str(manifest.get("dataset")),
        items=items_from_rows(rows),
        rate=manifest.get("rate"),
        seed=int(manifest.get("seed", 0)),
        sources=tuple(manifest.get("sources", ())),
    )
    if corpus.digest != manifest.get("digest"):
        raise DataError(
            f"corpus digest {corpus.digest} does not match the manifest's {manifest.get('digest')} "
            "(the corpus file was edited after it was written)",
            path=manifest_path,
            field="digest",
        )
    ledger = Ledger(
        tuple(
            LedgerEntry(**{k: row[k] for k in ("item_id", "original", "corrupted", "how", "plausibility",
                                               "confusability") if k in row})
            for row in ledger_rows
        )
    )
    _check_ledger(folder, manifest, ledger, {item.id for item in corpus.items})
    return corpus, ledger


def _check_ledger(folder: Path, manifest: dict[str, Any], ledger: Ledger, ids: set[str]) -> None:
    """Every ledger entry names a corpus item, and the ledger is the one the manifest recorded."""
    for line, entry in enumerate(ledger.entries, start=1):
        if entry.item_id not in ids:
            raise DataError(
                f"ledger entry for {entry.item_id!r}, which is not a corpus item",
                path=folder / LEDGER_FILE,
                line=line,
                field="item_id",
            )
    digest = hashlib.sha256(ledger.to_jsonl()).hexdigest()
    if digest != manifest.get("ledger_digest"):
        raise DataError(
            f"ledger digest {digest} does not match the manifest's {manifest.get('ledger_digest')} "
            "(the ledger file was edited after it was written)",
            path=folder / MANIFEST_FILE,
            field="ledger_digest",
        )


def file_digest(path: str | Path) -> str:
    """sha256 (hex) of a file's bytes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(
            "file not found (is this a corpus folder written by `biorab corpus build`?)", path=path
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON: {e.msg}", path=path, line=e.lineno) from e
    if not isinstance(data, dict):
        raise DataError("the manifest must be a JSON object", path=path)
    return data


def read_json_lines(
    path: Path, required: tuple[str, ...] = (), *, what: str = "file"
) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file, one per physical line (a blank line is an error, so list
    index + 1 is the line number).

    Args:
        path: the file.
        required: fields every object must have.
        what: names the file in the not-found error (``f"{what} not found"``).

    Raises:
        DataError: a missing file, or a line that is not a JSON object or lacks a required field (file,
            line and field named).
    """
    if not path.is_file():
        raise DataError(f"{what} not found", path=path)
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            try:
                row = json.loads(text)
            except json.JSONDecodeError as e:
                raise DataError(f"not valid JSON: {e.msg}", path=path, line=line) from e
            if not isinstance(row, dict):
                raise DataError("each line must be a JSON object", path=path, line=line)
            missing = [name for name in required if name not in row]
            if missing:
                raise DataError("missing field", path=path, line=line, field=missing[0])
            rows.append(row)
    return rows


def _check_metadata(path: Path, line: int, row: dict[str, Any]) -> None:
    metadata = row["metadata"]
    if not isinstance(metadata, dict):
        raise DataError("metadata must be an object", path=path, line=line, field="metadata")
    for name in ("value", "dataset", "task"):
        if name not in metadata:
            raise DataError("missing field", path=path, line=line, field=f"metadata.{name}")
    if not isinstance(row["text"], str) or not isinstance(row["_id"], str):
        raise DataError("_id and text must be strings", path=path, line=line, field="text")
