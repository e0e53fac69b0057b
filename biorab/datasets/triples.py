"""Shared rules of the triple-extraction loaders: a gold triple is ``head|relation|tail``.

The relation must be in the dataset's relation set (`biorab.common.labels.RELATIONS`); head and tail must be
non-blank and must not contain ``|`` (it would make the label unparseable). Entity text is kept byte for
byte; the metrics, not the loader, decide about case and whitespace.
"""

from __future__ import annotations

from collections.abc import Sequence

from biorab.datasets.base import Converted, check_label
from biorab.datasets.readers import SourceRow


def join_triple(
    row: SourceRow,
    parts: tuple[str, str, str],
    fields: tuple[str, str, str],
    relations: Sequence[str],
    dataset: str,
) -> str:
    """Validate ``(head, relation, tail)`` read from `fields` of `row` and join them with ``|``."""
    for part, field in zip(parts, fields, strict=True):
        if "|" in part:
            raise row.error(f"{part!r} contains '|', the triple separator", field)
        if not part.strip():
            raise row.error("empty value", field)
    check_label(row, fields[1], parts[1], relations, dataset)
    return "|".join(parts)


def split_triple(row: SourceRow, field: str, label: str, relations: Sequence[str], dataset: str) -> str:
    """Validate a ``head|relation|tail`` label string from `field` and return it unchanged."""
    parts = label.split("|")
    if len(parts) != 3:
        raise row.error(f"expected 'head|relation|tail', got {label!r} ({len(parts)} parts)", field)
    for part in parts:
        if not part.strip():
            raise row.error(f"empty element in triple {label!r}", field)
    check_label(row, field, parts[1], relations, dataset)
    return label


def sentence_example(sentence: str, label: str) -> Converted:
    """Triple extraction: the sentence is both `text` (the retrieval key/query) and ``fields["sentence"]``."""
    return Converted(text=sentence, label=label, fields={"sentence": sentence})
