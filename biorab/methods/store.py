"""A transformed corpus on disk: the corpus folder of `biorab.corpora.write_corpus` (``corpus.jsonl`` in
BEIR's shape, the source testbed's true ``ledger.jsonl``, ``manifest.json``) plus ``transform.jsonl`` (the
`TransformLedger`) and ``transform.json`` (method, source digest, counts)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.corpora import Corpus, Ledger, read_corpus, write_corpus
from biorab.corpora.store import read_json_lines
from biorab.methods.corpus_transform import TransformEntry, TransformLedger

TRANSFORM_FILE = "transform.jsonl"
INFO_FILE = "transform.json"


def write_transformed(folder: str | Path, corpus: Corpus, truth: Ledger, ledger: TransformLedger,
                      info: dict[str, Any]) -> Path:
    """Write the transformed corpus folder; `info` (method, source digest...) goes to ``transform.json``,
    written last so that a folder with it is complete."""
    folder = write_corpus(corpus, truth, folder)
    (folder / TRANSFORM_FILE).write_bytes(ledger.to_jsonl())
    payload = {**info, "method": ledger.method, "digest": corpus.digest, "counts": ledger.counts()}
    (folder / INFO_FILE).write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def is_complete(folder: str | Path) -> bool:
    return (Path(folder) / INFO_FILE).is_file()


def read_transformed(folder: str | Path) -> tuple[Corpus, Ledger, TransformLedger, dict[str, Any]]:
    """The transformed corpus, the source's true ledger, the transform ledger and ``transform.json``."""
    folder = Path(folder)
    corpus, truth = read_corpus(folder)
    info = json.loads((folder / INFO_FILE).read_text(encoding="utf-8"))
    fields = ("item_id", "before", "after", "flagged", "ok", "generation_key", "answer")
    rows = read_json_lines(folder / TRANSFORM_FILE, fields, what="transform ledger")
    entries = tuple(TransformEntry(**{k: row[k] for k in fields}) for row in rows)
    return corpus, truth, TransformLedger(str(info["method"]), entries), info


@dataclass(frozen=True)
class StoredTransform:
    """The retrieval stage's corpus hook: replaces a testbed corpus by its stored transformed version.

    Picklable (a Ray actor receives it inside the cell plan). Refuses a corpus other than the one the
    folder was transformed from, so a stale folder can never be indexed for the wrong testbed.
    """

    folder: str

    def __call__(self, corpus: Corpus, ledger: Ledger) -> Corpus:
        transformed, _truth, _ledger, info = read_transformed(self.folder)
        if info.get("source_digest") != corpus.digest:
            raise DataError(f"transformed corpus was made from corpus {info.get('source_digest')}, not "
                            f"{corpus.digest}", path=Path(self.folder) / INFO_FILE, field="source_digest")
        return transformed
