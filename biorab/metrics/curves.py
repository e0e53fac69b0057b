"""One-vs-rest ranking curves: the weight-independent part (sort order, ties) is computed once per label,
so each bootstrap resample only accumulates weights along it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class RankedLabel:
    """One label's instances sorted by descending score.

    Attributes:
        order: instance indices, highest score first (stable for ties).
        positive: gold == this label, in `order`.
        last: positions (in `order`) ending each run of tied scores: where thresholds sit.
    """

    order: np.ndarray
    positive: np.ndarray
    last: np.ndarray


def rank_label(scores: np.ndarray, positive: np.ndarray) -> RankedLabel:
    """Sort one label's scores (descending) and locate the tie runs.

    >>> rank_label(np.array([0.2, 0.9, 0.2]), np.array([True, False, False])).last.tolist()
    [0, 2]
    """
    order = np.argsort(-scores, kind="mergesort")
    sorted_scores = scores[order]
    last = np.r_[np.nonzero(np.diff(sorted_scores))[0], sorted_scores.size - 1]
    return RankedLabel(order=order, positive=np.asarray(positive, dtype=bool)[order], last=last)


def curve(ranked: RankedLabel, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative weighted true and false positives at each threshold, highest first."""
    w = weights[ranked.order]
    tps = np.cumsum(w * ranked.positive)[ranked.last]
    fps = np.cumsum(w * ~ranked.positive)[ranked.last]
    return tps, fps


def area_under_roc(tps: np.ndarray, fps: np.ndarray) -> float:
    """Trapezoidal ROC area (tied scores count one half); ``nan`` without positives or negatives.

    >>> area_under_roc(np.array([1.0, 1.0, 2.0, 2.0]), np.array([0.0, 1.0, 1.0, 2.0]))
    0.75
    """
    if tps[-1] <= 0 or fps[-1] <= 0:
        return float("nan")
    return float(np.trapezoid(np.r_[0.0, tps / tps[-1]], np.r_[0.0, fps / fps[-1]]))


def average_precision(tps: np.ndarray, fps: np.ndarray) -> float:
    """Sum over thresholds of (recall increase) x precision; ``nan`` without positives.

    >>> average_precision(np.array([1.0, 1.0, 2.0, 2.0]), np.array([0.0, 1.0, 1.0, 2.0]))
    0.8333333333333333
    """
    if tps[-1] <= 0:
        return float("nan")
    predicted = tps + fps
    precision = np.divide(tps, predicted, out=np.zeros_like(tps), where=predicted > 0)
    return float(np.sum(np.diff(np.r_[0.0, tps / tps[-1]]) * precision))
