"""`score`: every metric of a task, with bootstrap confidence intervals, for one prediction set."""

from __future__ import annotations

from collections.abc import Sequence

from biorab.common.build import build
from biorab.common.records import Prediction
from biorab.common.registry import METRICS
from biorab.metrics.base import Metric
from biorab.metrics.bootstrap import metric_values
from biorab.metrics.score_records import ScoreReport
from biorab.metrics.tables import ScoredTask, instance_table


def task_metrics(kind: ScoredTask) -> list[Metric]:
    """The metric objects of the task type `kind` (`TaskType.metrics`), built through the `METRICS`
    registry."""
    return [build(METRICS, name) for name in kind.metrics]


def score(
    kind: ScoredTask,
    golds: Sequence[str],
    predictions: Sequence[Prediction],
    *,
    labels: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    triple_matching: str = "normalized",
) -> ScoreReport:
    """Score `predictions` against canonical `golds` with every metric of the task type `kind` (what
    `TaskType.score` calls: ask the task, ``get_task("qa").score(...)``).

    Args:
        kind: the task type (`biorab.tasks.get_task`).
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

    >>> from biorab.common.records import Prediction
    >>> from biorab.tasks import get_task
    >>> report = score(get_task("qa"), ["(A)", "(B)"],
    ...                [Prediction("(A)", "(A)", True), Prediction(None, "?", False)], n_boot=0)
    >>> report.metrics["accuracy"].value, report.parse_failures
    (0.5, 1)
    """
    table = instance_table(kind, golds, predictions, labels=labels, triple_matching=triple_matching)
    usable, skipped = [], {}
    for metric in task_metrics(kind):
        reason = metric.skip_reason(table)
        if reason is None:
            usable.append(metric)
        else:
            skipped[metric.name] = reason
    values = metric_values(table, usable, n_boot=n_boot, seed=seed)
    failures = sum(not p.ok for p in predictions)
    return ScoreReport(metrics=values, n=len(golds), parse_failures=failures, skipped=skipped)
