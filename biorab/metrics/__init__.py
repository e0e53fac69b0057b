"""Metrics: one registered object per metric, bootstrap confidence intervals, paired tests and `score`.

Public API:
    score(task, golds, predictions, *, labels=None, n_boot=1000, seed=0) -> ScoreReport
    compare(task, golds, predictions_a, predictions_b, *, metric=None, labels=None, n_boot=1000, seed=0)
    mcnemar(correct_a, correct_b) -> McNemarResult
    negative_awareness(task_correct, judgments, *, negative_answer="False", ...) -> AwarenessReport
"""

from __future__ import annotations

# Importing these modules registers every metric in `biorab.common.registry.METRICS`.
from biorab.metrics import auc, awareness, classification, triples  # noqa: F401
from biorab.metrics.awareness import AwarenessReport, negative_awareness
from biorab.metrics.base import Metric
from biorab.metrics.paired import McNemarResult, PairedComparison, compare, mcnemar, paired_bootstrap
from biorab.metrics.score_records import MetricValue, ScoreReport
from biorab.metrics.task_scoring import score, task_metrics

__all__ = [
    "AwarenessReport",
    "McNemarResult",
    "Metric",
    "MetricValue",
    "PairedComparison",
    "ScoreReport",
    "compare",
    "mcnemar",
    "negative_awareness",
    "paired_bootstrap",
    "score",
    "task_metrics",
]
