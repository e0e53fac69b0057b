"""Seeded percentile bootstrap over instances.

A resample draws n instances with replacement; it is represented as per-instance multiplicity weights, so
all metrics of a report (and both systems of a paired comparison) see exactly the same resamples.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

import numpy as np

from biorab.metrics.base import InstanceTable, Metric
from biorab.metrics.score_records import MetricValue

CONFIDENCE = 0.95
#: Elements of one (resamples x instances) block of `resample_blocks`: bounds its memory (2 MiB of floats).
BLOCK_ELEMENTS = 2**18

TableT = TypeVar("TableT", contravariant=True)


class BatchMetric(Protocol[TableT]):
    """A metric that computes every resample of a block at once (`metric_values_batched`)."""

    @property
    def name(self) -> str: ...

    def compute(self, table: TableT) -> float:
        """The value on `table` (``nan`` when undefined)."""
        ...

    def compute_many(self, table: TableT, weights: np.ndarray) -> np.ndarray:
        """`compute` of `table` reweighted by each row of `weights` (resamples x instances), bit for bit."""
        ...


def resample_weights(n: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Yield `n_boot` multiplicity vectors (each sums to `n`) from ``numpy.random.default_rng(seed)``.

    >>> [w.tolist() for w in resample_weights(3, 2, seed=0)]
    [[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]]
    """
    for block in resample_blocks(n, n_boot, seed):
        yield from block


def resample_blocks(n: int, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """`resample_weights` as ``(c, n)`` blocks, in order (at most `BLOCK_ELEMENTS` per block).

    One ``(c, n)`` draw of bounded 64-bit integers is the same stream as `c` draws of `n` (numpy's
    ``Generator.integers`` buffers nothing between calls), and one offset ``bincount`` gives each row's
    multiplicities, so the rows are `resample_weights`' vectors exactly.

    >>> [b.tolist() for b in resample_blocks(3, 2, seed=0)]
    [[[0.0, 2.0, 1.0], [3.0, 0.0, 0.0]]]
    """
    rng = np.random.default_rng(seed)
    chunk = max(1, min(n_boot, BLOCK_ELEMENTS // max(n, 1)))
    for first in range(0, n_boot, chunk):
        c = min(chunk, n_boot - first)
        draws = rng.integers(0, n, size=(c, n)) + (np.arange(c) * n)[:, None]
        yield np.bincount(draws.ravel(), minlength=c * n).reshape(c, n).astype(float)


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
    return _intervals([m.name for m in metrics], points, samples)


def metric_values_batched(
    table: TableT, metrics: Sequence[BatchMetric[TableT]], *, n: int, n_boot: int, seed: int
) -> dict[str, MetricValue]:
    """`metric_values` of metrics that compute a block of resamples at once: the same resamples (the
    rows of `resample_blocks`), so the same values and intervals, without a Python call per resample.
    `n`: the table's instances."""
    points = [_undefined_as_none(m.compute(table)) for m in metrics]
    if n_boot <= 0 or not metrics:
        return {m.name: MetricValue(p) for m, p in zip(metrics, points, strict=True)}
    samples = np.concatenate([np.stack([m.compute_many(table, w) for m in metrics], axis=1)
                              for w in resample_blocks(n, n_boot, seed)])
    return _intervals([m.name for m in metrics], points, samples)


def _intervals(names: Sequence[str], points: Sequence[float | None],
               samples: np.ndarray) -> dict[str, MetricValue]:
    """Each metric's point estimate with the percentile interval of its column of `samples`."""
    values = {}
    for j, (name, point) in enumerate(zip(names, points, strict=True)):
        low, high = percentile_interval(samples[:, j])
        values[name] = MetricValue(point, low, high)
    return values


def _undefined_as_none(value: float) -> float | None:
    return None if np.isnan(value) else float(value)
