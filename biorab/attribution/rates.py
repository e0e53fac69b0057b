"""The attribution rates of a cell with 95% bootstrap CIs (`biorab.metrics.bootstrap`: the seeded
percentile bootstrap over instances every other metric uses).

Each rate is ``sum(w * numerator) / sum(w * denominator)`` over 0/1 columns of the cell's instances
(``nan``, reported as ``None``, when its denominator is empty); the denominators are in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from biorab.metrics.bootstrap import metric_values
from biorab.metrics.score_records import MetricValue


@dataclass(frozen=True, eq=False)
class RateTable:
    """Per instance, the numerator and denominator flag of each rate (`name` → (numerator, denominator))."""

    columns: Mapping[str, tuple[np.ndarray, np.ndarray]]
    weights: np.ndarray

    @property
    def n(self) -> int:
        return int(self.weights.shape[0])

    def reweight(self, weights: np.ndarray) -> RateTable:
        return replace(self, weights=weights)


@dataclass(frozen=True)
class Rate:
    """One rate of a `RateTable` (the shape `metric_values` computes with)."""

    name: str

    def compute(self, table: RateTable) -> float:
        numerator, denominator = table.columns[self.name]
        below = float((table.weights * denominator).sum())
        return float((table.weights * (numerator & denominator)).sum()) / below if below else float("nan")


def rates(columns: Mapping[str, tuple[list[bool], list[bool]]], *, n_boot: int,
          seed: int) -> dict[str, MetricValue]:
    """Each rate of `columns` (name → (numerator flags, denominator flags), one per instance) with its
    interval; every rate is computed on the same resamples.

    >>> out = rates({"r": ([True, False, False], [True, True, False])}, n_boot=0, seed=0)
    >>> out["r"].value
    0.5
    """
    arrays = {k: (np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)) for k, (a, b) in columns.items()}
    n = len(next(iter(arrays.values()))[0]) if arrays else 0
    table = RateTable(arrays, np.ones(n))
    return metric_values(table, [Rate(name) for name in arrays], n_boot=n_boot, seed=seed)  # type: ignore[misc]
