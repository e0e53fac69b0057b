"""Key an instance by its content, not its position, so that resume never keeps rows of data since edited.

Instance ids are positions (``ade/test/<i>``): after a fixed gold label or a deleted line, the same id names
another instance. A row on disk is reused only when its stored example columns (task, text, label, fields)
digest to the key of the current example; a row that moved keeps its work (under its new id and order),
an edited or new one is computed, and nothing else is. The key is derived from columns every row already
has, so shards written before keys existed resume without a schema change.

A retrieving cell's rows also depend on its corpus, which is built from other files (the dataset's train
split, the diverse pool's): their rows carry the cell's ``corpus_key`` (the digest of those files when the
row was planned) and it is part of their key, so after an edit of a corpus source every row of the cells
that read it is computed again (through the caches: unchanged prompts are not generated again), and a
row computed before keys existed (``corpus_key`` null) is computed once more. Cells that retrieve nothing
have no corpus key and keep their keys unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.common.records import Example
from biorab.generation.base import stable_digest

_CONTENT = ("task", "dataset", "split", "text", "label", "fields")


def instance_key(row: Mapping[str, Any]) -> str:
    """Digest of the example content of a row (or of ``Example.to_row()``), with its corpus key if any."""
    content = stable_digest(["instance/v1", *(row.get(c) for c in _CONTENT)])
    corpus = row.get("corpus_key")
    return content if corpus is None else f"{content}@{corpus}"


def example_key(example: Example, corpus_key: str | None = None) -> str:
    """The key a row of `example` computed with the corpus `corpus_key` has."""
    return instance_key({**example.to_row(), "corpus_key": corpus_key})


def current_row(row: Mapping[str, Any], example: Example, order: int) -> dict[str, Any]:
    """A reused row relabelled with the current example's id, order and source line."""
    return {**row, "id": example.id, "order": order, "source_line": example.source_line}
