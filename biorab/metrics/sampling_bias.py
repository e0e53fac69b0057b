"""Positive-class AUROC and AUPRC of a binary classification cell (the paper's sampling-bias table).

The registered ``auroc`` / ``auprc`` are one-vs-rest macro averages over the label columns as given; with
unnormalised label log-probs (the transformers backend) the two columns need not rank alike. The paper's
binary AUROC / AUPRC rank instances by P(positive), which we take as the softmax of the label scores over the
closed label set, as scikit-learn's ``roc_auc_score(y, p)`` / ``average_precision_score(y, p)`` would.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from biorab.common.records import Prediction
from biorab.metrics.auc import auroc_binary, average_precision_binary
from biorab.metrics.bootstrap import bootstrap_samples, percentile_interval
from biorab.metrics.score_records import MetricValue


def positive_probabilities(predictions: Sequence[Prediction], labels: Sequence[str], positive: str
                           ) -> np.ndarray | None:
    """P(positive) per instance: softmax of its label scores over `labels`; ``None`` when any prediction
    lacks a score for some label (e.g. a backend without label scoring).

    >>> p = positive_probabilities([Prediction("1", "1", True, {"1": 0.0, "0": -1.0})], ("1", "0"), "1")
    >>> round(float(p[0]), 4)
    0.7311
    """
    rows = []
    for pred in predictions:
        if pred.scores is None or any(label not in pred.scores for label in labels):
            return None
        rows.append([float(pred.scores[label]) for label in labels])
    logits = np.array(rows)
    logits -= logits.max(axis=1, keepdims=True)
    probs = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return probs[:, list(labels).index(positive)]


def binary_ranking(golds: Sequence[str], predictions: Sequence[Prediction], labels: Sequence[str],
                   positive: str, *, n_boot: int = 1000, seed: int = 0) -> dict[str, MetricValue]:
    """``binary_auroc`` and ``binary_auprc`` of the positive class with bootstrap CIs (``{}`` without
    label scores)."""
    probs = positive_probabilities(predictions, labels, positive)
    if probs is None:
        return {}
    is_pos = np.array([g == positive for g in golds])

    def both(w: np.ndarray) -> list[float]:
        return [auroc_binary(probs, is_pos, w), average_precision_binary(probs, is_pos, w)]

    points = both(np.ones(len(golds)))
    names = ("binary_auroc", "binary_auprc")
    if n_boot <= 0:
        return {n: MetricValue(None if np.isnan(p) else p) for n, p in zip(names, points, strict=True)}
    samples = bootstrap_samples(both, len(golds), n_boot, seed, 2)
    return {n: MetricValue(None if np.isnan(p) else p, *percentile_interval(samples[:, j]))
            for j, (n, p) in enumerate(zip(names, points, strict=True))}
