"""Label tables and confusion-matrix arithmetic for single-label tasks (link prediction, classification,
QA, NLI).

A prediction that failed to parse, or whose label is outside the label set, counts as a *wrong*
prediction: it lands in an extra "no valid answer" column of the confusion matrix. It is a false negative
for the gold label and a false positive of no real label. Micro-averaged precision, recall and F1 are
therefore all equal to accuracy (as in every single-label table of the paper), while macro and weighted
averages run over the label set only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from biorab.metrics.base import safe_ratio, safe_ratios
from biorab.metrics.curves import RankedLabel, curve, rank_label


@dataclass(frozen=True, eq=False)
class LabelTable:
    """Per-instance gold and predicted label indices of a single-label task.

    Attributes:
        labels: the label set; indices below refer to it.
        gold: gold label index per instance.
        pred: predicted label index per instance, ``-1`` for no valid prediction.
        failed: True where the prediction failed to parse.
        weights: per-instance weights (1.0 for the point estimate, multiplicities for a resample).
        ranked: per label, the instances ranked by that label's score (shared by resamples); ``None``
            without per-label scores.
        score_note: why `ranked` is missing, when it is.
    """

    labels: tuple[str, ...]
    gold: np.ndarray
    pred: np.ndarray
    failed: np.ndarray
    weights: np.ndarray
    ranked: tuple[RankedLabel, ...] | None = None
    score_note: str | None = None

    @property
    def n(self) -> int:
        return int(self.gold.shape[0])

    def reweight(self, weights: np.ndarray) -> LabelTable:
        return replace(self, weights=weights)

    @property
    def correct(self) -> np.ndarray:
        """Per-instance correctness (for McNemar)."""
        return np.asarray(self.gold == self.pred)

    @cached_property
    def curves(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per label, weighted cumulative (true, false) positives along its ranking (empty without scores)."""
        return [curve(r, self.weights) for r in self.ranked or ()]

    @cached_property
    def confusion(self) -> np.ndarray:
        """Weighted counts, rows = gold label, columns = predicted label plus a last "no answer" column."""
        return confusion_matrix(self.gold, self.pred, len(self.labels), self.weights)

    @cached_property
    def prf(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`per_label_prf` of `confusion`, once per table: a bootstrap resample is one table read by every
        macro and weighted metric."""
        return per_label_prf(self.confusion)


def label_table(
    golds: Sequence[str],
    predicted: Sequence[str | None],
    failed: Sequence[bool],
    labels: Sequence[str],
    scores: np.ndarray | None = None,
    score_note: str | None = None,
) -> LabelTable:
    """Index golds and predictions by `labels` (golds must be in it; other predictions become ``-1``)."""
    position = {label: i for i, label in enumerate(labels)}
    gold = np.array([position[g] for g in golds], dtype=np.int64)
    pred = np.array([position.get(p, -1) if p is not None else -1 for p in predicted], dtype=np.int64)
    ranked = None
    if scores is not None:
        # Sorted once; every resample reuses the order and tie runs.
        ranked = tuple(rank_label(scores[:, j], gold == j) for j in range(len(labels)))
    return LabelTable(
        labels=tuple(labels),
        gold=gold,
        pred=pred,
        failed=np.asarray(failed, dtype=bool),
        weights=np.ones(len(gold)),
        ranked=ranked,
        score_note=score_note,
    )


def confusion_matrix(gold: np.ndarray, pred: np.ndarray, n_labels: int, weights: np.ndarray) -> np.ndarray:
    """Weighted confusion matrix with an extra last column for "no valid prediction" (``pred == -1``).

    >>> confusion_matrix(np.array([0, 0, 1]), np.array([0, -1, 0]), 2, np.ones(3))
    array([[1., 0., 1.],
           [1., 0., 0.]])
    """
    columns = np.where(pred < 0, n_labels, pred)
    flat = np.bincount(gold * (n_labels + 1) + columns, weights=weights, minlength=n_labels * (n_labels + 1))
    return flat.reshape(n_labels, n_labels + 1)


def per_label_prf(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-label precision, recall, F1 and support (gold count) from a confusion matrix.

    Zero denominators give 0 (scikit-learn's ``zero_division=0``).

    >>> p, r, f, s = per_label_prf(np.array([[1., 0., 1.], [1., 0., 0.]]))
    >>> p.tolist(), r.tolist(), f.tolist(), s.tolist()
    ([0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [2.0, 1.0])
    """
    n_labels = confusion.shape[0]
    tp = np.diag(confusion[:, :n_labels])
    support = confusion.sum(axis=1)
    predicted = confusion[:, :n_labels].sum(axis=0)
    precision = _divide(tp, predicted)
    recall = _divide(tp, support)
    f1 = _divide(2.0 * precision * recall, precision + recall)
    return precision, recall, f1, support


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return np.divide(numerator, denominator, out=np.zeros_like(numerator, dtype=float), where=denominator > 0)


def accuracies(table: LabelTable, weights: np.ndarray) -> np.ndarray:
    """`accuracy` of `table`'s confusion matrix under each row of `weights` (resamples x instances), bit
    for bit: the trace and the total are sums of whole multiplicities, exact in any order (a matrix
    product's too), and the one division is the same."""
    return safe_ratios(weights @ (table.gold == table.pred).astype(float), weights.sum(axis=1))


def accuracy(confusion: np.ndarray) -> float:
    """Share of (weighted) instances whose prediction equals the gold label.

    >>> accuracy(np.array([[1., 0., 1.], [1., 0., 0.]]))
    0.3333333333333333
    """
    n_labels = confusion.shape[0]
    return safe_ratio(np.trace(confusion[:, :n_labels]), confusion.sum())


def macro_average(values: np.ndarray) -> float:
    """Unweighted mean over the label set (labels absent from gold and predictions count as 0).

    >>> macro_average(np.array([0.5, 0.0]))
    0.25
    """
    return float(values.mean()) if values.size else 0.0


def weighted_average(values: np.ndarray, support: np.ndarray) -> float:
    """Mean over labels weighted by gold support.

    >>> weighted_average(np.array([0.5, 0.0]), np.array([2.0, 1.0]))
    0.3333333333333333
    """
    return safe_ratio(float((values * support).sum()), float(support.sum()))
