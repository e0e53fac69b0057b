"""Per answer: did it follow a corrupted hit, did it copy a hit's label, and (triples) which §2.8 errors it
makes. Answers and labels are compared as the task's normalized answer items
(`biorab.tasks.TaskType.answer_items`: one item for a single label, one ``head|relation|tail`` item per
triple), so the rule is the same for every task and agrees with the metrics' normalization."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biorab.common.records import Hit, Prediction
from biorab.tasks import get_task


@dataclass(frozen=True)
class AnswerFlags:
    """What one answer did with its evidence (the answer columns of ``attribution.parquet``)."""

    has_corrupted: bool
    #: Some corrupted hit is misleading: its changed items (its label's items its training label lacks)
    #: are not all in the gold. The denominator of the misled and resisted rates.
    misleading_evidence: bool
    #: 1-based position, among the hits, of the first misleading one (``None``: none is).
    first_misleading_rank: int | None
    followed_corruption: bool
    copied_evidence: bool
    copied_corrupted: bool
    #: The answer's items equal a misleading hit's (the numerator of ``switched_to_corruption``).
    copied_misleading: bool
    #: Some hit is labeled and none is corrupted: the denominator of the copy rate on clean evidence.
    clean_evidence: bool
    error_types: dict[str, int] | None
    #: Per hit, whether it is misleading (aligned with the hits; the ``misleading`` key of ``hit_tags``).
    misleading: tuple[bool, ...] = ()
    #: The answer's normalized items (empty for a parse failure).
    items: frozenset[str] = frozenset()
    #: Per hit, its changed items outside the gold (empty unless misleading): what the corruption asserts.
    changed: tuple[frozenset[str], ...] = ()


def answer_flags(task: str, gold: str | None, prediction: Prediction, hits: Sequence[Hit],
                 tags: Sequence[dict[str, Any]]) -> AnswerFlags:
    """The flags of one answer (`tags`: `biorab.attribution.evidence.Evidence.tags` of `hits`).

    - misleading (per hit): a corrupted hit whose changed items (its label's items that its original label
      lacks) are not all in the gold; a corruption that agrees with the gold cannot mislead;
    - followed_corruption: some misleading hit's changed items meet the answer's items outside the gold: a
      single label equal to the corrupted label and not the gold, or a predicted triple equal to a
      corrupted triple and not a gold triple;
    - copied_evidence / copied_corrupted / copied_misleading: the answer's items equal a labeled hit's (a
      corrupted hit's, a misleading hit's).
    A parse failure has no items: it follows and copies nothing. `error_types`: the task's
    (`TaskType.error_types`) for open answers (``closed`` tasks: ``None``). The same function flags the
    no-retrieval twin's answer against the cell's hits (`biorab.attribution.cell_attribution`).
    """
    kind = get_task(task)
    predicted = kind.answer_items(prediction.label) if prediction.ok and prediction.label else frozenset()
    golds = kind.answer_items(gold) if gold else frozenset()
    wrong = [(label_items(kind, t["corrupted_label"]) - label_items(kind, t["original_label"] or "")) - golds
             if t["corrupted"] else frozenset() for t in tags]
    misleading = tuple(bool(w) for w in wrong)
    followed = any(predicted & w for w in wrong)
    labeled = [(h, t, m) for h, t, m in zip(hits, tags, misleading, strict=True) if h.value is not None]
    copied = [(t, m) for h, t, m in labeled if predicted and label_items(kind, h.value or "") == predicted]
    # The §2.8 error types describe open answers (spans and triples); a closed label is just right or wrong.
    errors = kind.error_types(prediction.label if prediction.ok else None, gold, raw=prediction.raw,
                              echoes=[hit.key for hit in hits]) if gold and not kind.closed else None
    corrupted = any(t["corrupted"] for t in tags)
    return AnswerFlags(
        has_corrupted=corrupted,
        misleading_evidence=any(misleading),
        first_misleading_rank=misleading.index(True) + 1 if any(misleading) else None,
        followed_corruption=followed,
        copied_evidence=bool(copied),
        copied_corrupted=any(t["corrupted"] for t, _ in copied),
        copied_misleading=any(m for _, m in copied),
        clean_evidence=bool(labeled) and not corrupted,
        error_types=errors or None,
        misleading=misleading,
        items=predicted,
        changed=tuple(wrong),
    )


def label_items(kind: Any, label: str) -> frozenset[str]:
    """The label's answer items, read as evidence (`biorab.tasks.TaskType.evidence_items`): a label the
    task cannot read as items is its own single item, so it is still compared, never dropped."""
    return frozenset(kind.evidence_items(label))


def error_types_json(errors: dict[str, int] | None) -> str | None:
    return None if errors is None else json.dumps(errors, sort_keys=True)
