"""The attribution rates of a cell with 95% bootstrap CIs (`biorab.metrics.bootstrap`: the seeded
percentile bootstrap over instances every other metric uses).

Each rate is ``sum(w * numerator) / sum(w * denominator)`` over 0/1 columns of the cell's instances
(``nan``, reported as ``None``, when its denominator is empty); an excess is the difference of two such
rates over one denominator, ``sum(w * (a - b)) / sum(w * denominator)``: the cell's flag minus its
no-retrieval twin's on the same instances, so each resample draws both of a pair (a paired bootstrap). The
denominators are in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from biorab.metrics.bootstrap import metric_values_batched
from biorab.metrics.score_records import MetricValue


@dataclass(frozen=True, eq=False)
class RateTable:
    """Per instance, the flags of each rate: `name` → (numerator, denominator), or for an excess
    (numerator, subtracted numerator, denominator)."""

    columns: Mapping[str, tuple[np.ndarray, ...]]
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
        *numerators, denominator = table.columns[self.name]
        below = float((table.weights * denominator).sum())
        if not below:
            return float("nan")
        above = float((table.weights * (numerators[0] & denominator)).sum())
        if len(numerators) == 2:  # an excess: minus the paired flag
            above -= float((table.weights * (numerators[1] & denominator)).sum())
        return above / below

    def compute_many(self, table: RateTable, weights: np.ndarray) -> np.ndarray:
        """`compute` under each row of `weights` (resamples x instances), bit for bit: every product is an
        integer multiplicity times a 0/1 flag and every sum an integer below 2**53, exact in any order (a
        matrix product's included), and the one division is the same."""
        *numerators, denominator = table.columns[self.name]
        below = weights @ denominator.astype(float)
        above = weights @ (numerators[0] & denominator).astype(float)
        if len(numerators) == 2:
            above = above - weights @ (numerators[1] & denominator).astype(float)
        defined = below != 0
        return np.where(defined, above / np.where(defined, below, 1.0), np.nan)


def rates(columns: Mapping[str, tuple[list[bool], ...]], *, n_boot: int, seed: int) -> dict[str, MetricValue]:
    """Each rate of `columns` (name → (numerator flags, denominator flags), or (numerator, subtracted
    numerator, denominator) for an excess; one flag per instance) with its interval; every rate is computed
    on the same resamples.

    >>> out = rates({"r": ([True, False, False], [True, True, False]),
    ...              "d": ([True, False, False], [False, True, False], [True, True, False])},
    ...             n_boot=0, seed=0)
    >>> out["r"].value, out["d"].value
    (0.5, 0.0)
    """
    arrays = {k: tuple(np.asarray(c, dtype=bool) for c in cols) for k, cols in columns.items()}
    if any(len(cols) not in (2, 3) for cols in arrays.values()):
        raise ValueError("each rate takes (numerator, denominator) or (numerator, subtracted, denominator)")
    n = len(next(iter(arrays.values()))[0]) if arrays else 0
    table = RateTable(arrays, np.ones(n))
    return metric_values_batched(table, [Rate(name) for name in arrays], n=n, n_boot=n_boot, seed=seed)
