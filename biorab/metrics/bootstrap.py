"""Seeded percentile bootstrap over instances.

A resample draws n instances with replacement; it is represented as per-instance multiplicity weights, so
all metrics of a report (and both systems of a paired comparison) see exactly the same resamples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from biorab.metrics.base import InstanceTable, Metric
from biorab.metrics.score_records import MetricValue

CONFIDENCE = 0.95


def resample_weights(n: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Yield `n_boot` multiplicity vectors (each sums to `n`) from ``numpy.random.default_rng(seed)``.

    >>> [w.tolist() for w in resample_weights(3, 2, seed=0)]
    [[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]]
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_boot):
        yield np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)


def bootstrap_samples(
    statistic: Callable[[np.ndarray], Sequence[float]], n: int, n_boot: int, seed: int, width: int
) -> np.ndarray:
    """``(n_boot, width)`` values of `statistic(weights)` over the seeded resamples."""
    out = np.empty((n_boot, width))
    for b, weights in enumerate(resample_weights(n, n_boot, seed)):
        out[b] = statistic(weights)
    return out


def percentile_interval(
    samples: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float | None, float | None]:
    """The central `confidence` percentile interval of `samples`, ignoring nan (undefined) resamples.

    >>> [round(x, 9) for x in percentile_interval(np.arange(41.0))]
    [1.0, 39.0]
    >>> percentile_interval(np.array([np.nan]))
    (None, None)
    """
    finite = samples[~np.isnan(samples)]
    if finite.size == 0:
        return None, None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(finite, [tail, 100.0 - tail])
    return float(low), float(high)


def metric_values(
    table: InstanceTable, metrics: Sequence[Metric], *, n_boot: int, seed: int
) -> dict[str, MetricValue]:
    """Point estimate and bootstrap interval of each metric on `table` (shared resamples)."""
    points = [_undefined_as_none(m.compute(table)) for m in metrics]
    if n_boot <= 0 or not metrics:
        return {m.name: MetricValue(p) for m, p in zip(metrics, points, strict=True)}

    def all_metrics(weights: np.ndarray) -> list[float]:
        resample = table.reweight(weights)  # one table per resample, so cached statistics are shared
        return [m.compute(resample) for m in metrics]

    samples = bootstrap_samples(all_metrics, table.n, n_boot, seed, len(metrics))
    values = {}
    for j, (metric, point) in enumerate(zip(metrics, points, strict=True)):
        low, high = percentile_interval(samples[:, j])
        values[metric.name] = MetricValue(point, low, high)
    return values


def _undefined_as_none(value: float) -> float | None:
    return None if np.isnan(value) else float(value)
