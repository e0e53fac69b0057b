"""AUROC and AUPRC (average precision), one-vs-rest from per-label scores and macro-averaged.

A prediction carries scores in `Prediction.scores` (label -> probability or log-probability) when the
backend could score the closed label set. Each label's column ranks the instances for that label's
one-vs-rest curve. A label without gold positives (or, for AUROC, without negatives) has no curve and is
left out of the average; the metric is ``nan`` when no label has one.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from biorab.common.registry import METRICS
from biorab.metrics.base import Metric
from biorab.metrics.confusion import LabelTable
from biorab.metrics.curves import area_under_roc, average_precision, curve, rank_label


def auroc_binary(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Area under the ROC curve of one binary problem (ties count one half); ``nan`` if undefined.

    >>> auroc_binary(np.array([0.9, 0.8, 0.7, 0.1]), np.array([True, False, True, False]))
    0.75
    >>> auroc_binary(np.array([0.5, 0.5]), np.array([True, False]))
    0.5
    """
    weights = np.ones(scores.size) if weights is None else weights
    return area_under_roc(*curve(rank_label(scores, positive), weights))


def average_precision_binary(
    scores: np.ndarray, positive: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """Average precision (step-wise area under the precision-recall curve); ``nan`` without positives.

    >>> average_precision_binary(np.array([0.9, 0.8, 0.7, 0.1]), np.array([True, False, True, False]))
    0.8333333333333333
    """
    weights = np.ones(scores.size) if weights is None else weights
    return average_precision(*curve(rank_label(scores, positive), weights))


class _OneVsRest(Metric[LabelTable]):
    area: Callable[[np.ndarray, np.ndarray], float]

    def skip_reason(self, table: LabelTable) -> str | None:
        if table.ranked is None:
            return table.score_note or "no per-label scores in the predictions (Prediction.scores)"
        return None

    def compute(self, table: LabelTable) -> float:
        values = [type(self).area(tps, fps) for tps, fps in table.curves]
        defined = [v for v in values if not np.isnan(v)]
        return float(np.mean(defined)) if defined else float("nan")


@METRICS.register("auroc")
class MacroAUROC(_OneVsRest):
    """One-vs-rest AUROC, macro-averaged over labels that have gold positives and negatives."""

    name = "auroc"
    area = staticmethod(area_under_roc)


@METRICS.register("auprc")
class MacroAUPRC(_OneVsRest):
    """One-vs-rest average precision, macro-averaged over labels that have gold positives."""

    name = "auprc"
    area = staticmethod(average_precision)
