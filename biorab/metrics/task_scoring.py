"""`score`: every metric of a task, with bootstrap confidence intervals, for one prediction set."""

from __future__ import annotations

from collections.abc import Sequence

from biorab.build import build
from biorab.metrics.base import Metric
from biorab.metrics.bootstrap import metric_values
from biorab.metrics.score_records import ScoreReport
from biorab.metrics.tables import check_task, instance_table
from biorab.records import Prediction
from biorab.registry import METRICS

_LABEL_METRICS: tuple[str, ...] = (
    "accuracy",
    # The same names as for triples, so every task's report has `f1` (here = micro F1 = accuracy).
    "precision", "recall", "f1",
    "micro_precision", "micro_recall", "micro_f1",
    "macro_precision", "macro_recall", "macro_f1",
    "weighted_precision", "weighted_recall", "weighted_f1",
    "parse_failure_rate", "auroc", "auprc",
)  # fmt: skip

# The metrics of each task, in report order.
TASK_METRICS: dict[str, tuple[str, ...]] = {
    "triple_extraction": (
        "precision", "recall", "f1",
        "head_precision", "head_recall", "head_f1",
        "relation_precision", "relation_recall", "relation_f1",
        "tail_precision", "tail_recall", "tail_f1",
        "parse_failure_rate",
    ),
    "link_prediction": _LABEL_METRICS,
    "classification": _LABEL_METRICS,
    "qa": _LABEL_METRICS,
    "nli": _LABEL_METRICS,
}  # fmt: skip

# The headline metric of each task in the paper's Table 1 (micro F1; macro F1 for QA and NLI).
PRIMARY_METRIC: dict[str, str] = {
    "triple_extraction": "f1",
    "link_prediction": "micro_f1",
    "classification": "micro_f1",
    "qa": "macro_f1",
    "nli": "macro_f1",
}


def task_metrics(task: str) -> list[Metric]:
    """The metric objects of `task`, built through the `METRICS` registry."""
    check_task(task)
    return [build(METRICS, name) for name in TASK_METRICS[task]]


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
        task: one of `biorab.records.TASK_NAMES`.
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

    >>> from biorab.records import Prediction
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
