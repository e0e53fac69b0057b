"""`score`: every metric of a task, with bootstrap confidence intervals, for one prediction set."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from biorab.common.build import build
from biorab.common.records import Prediction
from biorab.common.registry import METRICS, TASKS
from biorab.metrics.base import Metric
from biorab.metrics.bootstrap import metric_values
from biorab.metrics.score_records import ScoreReport
from biorab.metrics.tables import check_task, instance_table


class _ByTask(Mapping[str, Any]):
    """A read-only view, task name -> one attribute of its task type, over `biorab.common.registry.TASKS` (so
    a
    newly registered task appears without an edit here)."""

    def __init__(self, attribute: str) -> None:
        self._attribute = attribute

    def __getitem__(self, task: str) -> Any:
        if task not in TASKS:
            raise KeyError(task)
        return getattr(TASKS.get(task), self._attribute)

    def __iter__(self) -> Iterator[str]:
        return iter(TASKS.names())

    def __len__(self) -> int:
        return len(TASKS.names())


#: The metrics of each task, in report order (`TaskType.metrics`).
TASK_METRICS: Mapping[str, tuple[str, ...]] = _ByTask("metrics")
#: The headline metric of each task in the paper's Table 1 (`TaskType.headline`: micro F1; macro F1 for QA
#: and NLI).
PRIMARY_METRIC: Mapping[str, str] = _ByTask("headline")


def task_metrics(task: str) -> list[Metric]:
    """The metric objects of `task`, built through the `METRICS` registry."""
    return [build(METRICS, name) for name in check_task(task).metrics]


def score(
    task: str,
    golds: Sequence[str],
    predictions: Sequence[Prediction],
    *,
    labels: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    triple_matching: str = "normalized",
) -> ScoreReport:
    """Score `predictions` against canonical `golds` with every metric of `task`.

    Args:
        task: a registered task (`biorab.common.registry.TASKS`).
        golds: canonical gold labels, one per instance (triples: ``head|relation|tail`` lines).
        predictions: parsed predictions, aligned with `golds`; ``ok=False`` is a parse failure, which
            counts as a wrong answer (for triples: as predicting no triple).
        labels: the closed label set of a single-label task; default the sorted set of gold labels.
            Ignored for triples.
        n_boot: bootstrap resamples for the 95% percentile intervals (0 turns intervals off).
        seed: seed of the resampling.
        triple_matching: how triple elements are compared, ``normalized`` (default) or ``original``
            (``5_metrics.py``'s rule; pair it with the ``strict_original`` parser), see
            `biorab.metrics.triples.TRIPLE_MATCHING`.

    Returns:
        The report; AUROC/AUPRC appear only when every prediction carries per-label scores, otherwise
        they are listed in `ScoreReport.skipped` with the reason.

    Raises:
        DataError: misaligned inputs, no instances, a malformed gold (naming the instance) or a gold label
            outside `labels`.
        UnknownNameError: `task` is not a known task.

    >>> from biorab.common.records import Prediction
    >>> report = score("qa", ["(A)", "(B)"], [Prediction("(A)", "(A)", True), Prediction(None, "?", False)],
    ...                n_boot=0)
    >>> report.metrics["accuracy"].value, report.parse_failures
    (0.5, 1)
    """
    table = instance_table(task, golds, predictions, labels=labels, triple_matching=triple_matching)
    usable, skipped = [], {}
    for metric in task_metrics(task):
        reason = metric.skip_reason(table)
        if reason is None:
            usable.append(metric)
        else:
            skipped[metric.name] = reason
    values = metric_values(table, usable, n_boot=n_boot, seed=seed)
    failures = sum(not p.ok for p in predictions)
    return ScoreReport(metrics=values, n=len(golds), parse_failures=failures, skipped=skipped)
