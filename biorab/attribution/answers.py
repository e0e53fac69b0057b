"""Per answer: did it follow a corrupted hit, did it copy a hit's label, and (triples) which §2.8 errors it
makes. Answers and labels are compared as the task's normalized answer items
(`biorab.tasks.TaskType.answer_items`: one item for a single label, one ``head|relation|tail`` item per
triple), so the rule is the same for every task and agrees with the metrics' normalization."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biorab.records import Hit, Prediction
from biorab.tasks import get_task


@dataclass(frozen=True)
class AnswerFlags:
    """What one answer did with its evidence (the answer columns of ``attribution.parquet``)."""

    has_corrupted: bool
    followed_corruption: bool
    copied_evidence: bool
    copied_corrupted: bool
    #: Some hit is labeled and none is corrupted: the denominator of the copy rate on clean evidence.
    clean_evidence: bool
    error_types: dict[str, int] | None


def _evidence_items(kind: Any, value: str) -> frozenset[str]:
    """A hit's value as the task's answer items; a value not in the task's answer form has none (the
    diverse testbed's hits come from other tasks' corpora: a triple task's hit may hold the label 'y',
    which ended a whole sweep with "triple line 1 'y' has 1 '|'-separated parts")."""
    try:
        return kind.answer_items(value)
    except ValueError:
        return frozenset()


def answer_flags(task: str, gold: str | None, prediction: Prediction, hits: Sequence[Hit],
                 tags: Sequence[dict[str, Any]]) -> AnswerFlags:
    """The flags of one answer (`tags`: `biorab.attribution.evidence.Evidence.tags` of `hits`).

    - followed_corruption: some corrupted hit's changed items (its label's items that its original label
      lacks) meet the answer's items outside the gold: a single label equal to the corrupted label and not
      the gold, or a predicted triple equal to a corrupted triple and not a gold triple;
    - copied_evidence / copied_corrupted: the answer's items equal a labeled hit's (a corrupted hit's).
    A parse failure has no items: it follows and copies nothing. `error_types`: the task's
    (`TaskType.error_types`) for open answers (``closed`` tasks: ``None``).
    """
    kind = get_task(task)
    predicted = kind.answer_items(prediction.label) if prediction.ok and prediction.label else frozenset()
    golds = kind.answer_items(gold) if gold else frozenset()
    corrupted = [t for t in tags if t["corrupted"]]
    followed = any((predicted & (_evidence_items(kind, t["corrupted_label"])
                                 - _evidence_items(kind, t["original_label"] or ""))) - golds
                   for t in corrupted)
    labeled = [(hit, tag) for hit, tag in zip(hits, tags, strict=True) if hit.value is not None]
    copied = [tag for hit, tag in labeled
              if predicted and _evidence_items(kind, hit.value or "") == predicted]
    # The §2.8 error types describe open answers (spans and triples); a closed label is just right or wrong.
    errors = kind.error_types(prediction.label if prediction.ok else None, gold) if gold and not kind.closed \
        else None
    return AnswerFlags(
        has_corrupted=bool(corrupted),
        followed_corruption=followed,
        copied_evidence=bool(copied),
        copied_corrupted=any(t["corrupted"] for t in copied),
        clean_evidence=bool(labeled) and not corrupted,
        error_types=errors or None,
    )


def error_types_json(errors: dict[str, int] | None) -> str | None:
    return None if errors is None else json.dumps(errors, sort_keys=True)
