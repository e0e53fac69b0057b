"""Turn (golds, predictions) into the instance table a task's metrics read, validating as it goes.

Golds are canonical label strings (see `biorab.common.records.Example.label`); predictions are parsed
`Prediction`s. Bad golds are `DataError`s naming the 0-based instance; a prediction is never an error
unless a parser produced a non-canonical label.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from biorab.common.errors import ConfigError, DataError
from biorab.common.records import Prediction
from biorab.metrics.confusion import LabelTable, label_table
from biorab.metrics.triples import TRIPLE_MATCHING, Triple, TripleTable, parse_triples, triple_table


class ScoredTask(Protocol):
    """What scoring asks of a task type (`biorab.tasks.task_types.TaskType`, the entry point: `TaskType.score`
    calls this package with itself). The task is handed in, never looked up by name: this package reads no
    task registry."""

    @property
    def name(self) -> str: ...

    @property
    def closed(self) -> bool: ...

    @property
    def labels_fixed(self) -> bool: ...

    @property
    def metrics(self) -> tuple[str, ...]: ...

    @property
    def headline(self) -> str: ...

    def instance_table(
        self, golds: Sequence[str], predictions: Sequence[Prediction], labels: Sequence[str] | None,
        triple_matching: str,
    ) -> Any: ...

    def gold_error(self, gold: str, labels: Sequence[str] | None) -> str | None: ...

    def parse(self, text: str, *, mode: str = "robust", labels: Sequence[str] | None = None,
              options: Mapping[str, str] | None = None) -> Prediction: ...


def resolve_labels(golds: Sequence[str], labels: Sequence[str] | None) -> tuple[str, ...]:
    """The label set: `labels` as given (no duplicates allowed), else the sorted set of gold labels."""
    if labels is None:
        return tuple(sorted(set(golds)))
    resolved = tuple(labels)
    duplicates = sorted({label for label in resolved if resolved.count(label) > 1})
    if duplicates:
        raise DataError(f"label set lists {duplicates} more than once", field="labels")
    if not resolved:
        raise DataError("label set is empty", field="labels")
    return resolved


def instance_table(
    kind: ScoredTask,
    golds: Sequence[str],
    predictions: Sequence[Prediction],
    *,
    labels: Sequence[str] | None = None,
    triple_matching: str = "normalized",
) -> LabelTable | TripleTable:
    """Validate and index one prediction set for the task type `kind`: the table its metrics read
    (`TaskType.instance_table`; `triple_matching`: see `TRIPLE_MATCHING`)."""
    if len(golds) != len(predictions):
        raise DataError(f"{len(golds)} gold labels but {len(predictions)} predictions")
    if not golds:
        raise DataError("nothing to score: no instances")
    table: LabelTable | TripleTable = kind.instance_table(golds, predictions, labels, triple_matching)
    return table


def triple_instance_table(
    golds: Sequence[str], predictions: Sequence[Prediction], matching: str
) -> TripleTable:
    """The `TripleTable` of canonical triple golds and parsed predictions (`matching`: `TRIPLE_MATCHING`)."""
    if matching not in TRIPLE_MATCHING:
        raise ConfigError(
            f"unknown triple matching {matching!r}; use one of {', '.join(TRIPLE_MATCHING)}",
            key="triple_matching",
        )
    gold_sets = [_triple_set(g, i, "gold", matching) for i, g in enumerate(golds)]
    predicted: list[frozenset[Triple] | None] = [
        _triple_set(p.label, i, "prediction", matching) if _valid(p) and p.label is not None else None
        for i, p in enumerate(predictions)
    ]
    return triple_table(gold_sets, predicted)


def _triple_set(text: str, index: int, field: str, matching: str) -> frozenset[Triple]:
    try:
        return parse_triples(text, matching=matching, side=field)
    except ValueError as e:
        raise DataError(f"instance {index}: {e}", field=field) from e


def label_instance_table(
    golds: Sequence[str], predictions: Sequence[Prediction], labels: tuple[str, ...]
) -> LabelTable:
    """The `LabelTable` of single-label golds (each in `labels`) and parsed predictions."""
    known = set(labels)
    for i, gold in enumerate(golds):
        if gold not in known:
            raise DataError(
                f"instance {i}: gold label {gold!r} is not in the label set {list(labels)}", field="gold"
            )
    predicted = [p.label if _valid(p) else None for p in predictions]
    scores, note = score_matrix(predictions, labels)
    return label_table(golds, predicted, [not p.ok for p in predictions], labels, scores, note)


def _valid(prediction: Prediction) -> bool:
    return prediction.ok and prediction.label is not None


def score_matrix(
    predictions: Sequence[Prediction], labels: Sequence[str]
) -> tuple[np.ndarray | None, str | None]:
    """``(n, len(labels))`` scores when every prediction scores every label, else ``None`` and why not."""
    missing = sum(p.scores is None for p in predictions)
    if missing:
        return None, f"{missing} of {len(predictions)} predictions have no per-label scores"
    rows = []
    for i, prediction in enumerate(predictions):
        assert prediction.scores is not None
        absent = [label for label in labels if label not in prediction.scores]
        if absent:
            return None, f"prediction {i} has no score for label(s) {absent}"
        row = [float(prediction.scores[label]) for label in labels]
        if any(math.isnan(x) for x in row):
            return None, f"prediction {i} has a NaN score"
        rows.append(row)
    return np.array(rows, dtype=float), None
