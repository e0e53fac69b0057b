"""What every metric object looks like, and the instance tables they read.

A metric is a function of a table of per-instance statistics and per-instance *weights*. The point
estimate uses weight 1 everywhere; a bootstrap resample is the same table with each instance weighted by
how often it was drawn. So a resample never copies or re-sorts instances, and every metric of a report is
computed on exactly the same resamples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Generic, Protocol, TypeVar

import numpy as np

from biorab.common.params import Params as BaseParams


class InstanceTable(Protocol):
    """Per-instance statistics that can be re-weighted (weights are float multiplicities)."""

    @property
    def n(self) -> int: ...

    @property
    def weights(self) -> np.ndarray: ...

    def reweight(self, weights: np.ndarray) -> InstanceTable: ...


class FailureTable(Protocol):
    """A table that knows which predictions failed to parse."""

    @property
    def failed(self) -> np.ndarray: ...

    @property
    def weights(self) -> np.ndarray: ...


TableT = TypeVar("TableT", contravariant=True)


class Metric(ABC, Generic[TableT]):
    """One metric, registered in `biorab.common.registry.METRICS` under `name`.

    Subclasses set `name` and implement `compute` (a task type lists the metrics it reports). `compute`
    returns ``nan`` when the metric is undefined on that (re-weighted) table; `skip_reason` says why a
    metric cannot be computed at all.
    """

    name: ClassVar[str]

    class Params(BaseParams):
        """Metrics take no options; the nested model keeps `biorab.common.build.build` uniform."""

    def __init__(self, params: Metric.Params | None = None) -> None:
        self.params = params or self.Params()

    def skip_reason(self, table: TableT) -> str | None:
        """Why this metric cannot be computed on `table` (``None`` when it can)."""
        return None

    @abstractmethod
    def compute(self, table: TableT) -> float:
        """The metric's value on `table` (``nan`` when undefined)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def safe_ratio(numerator: float, denominator: float) -> float:
    """`numerator / denominator`, or 0.0 when the denominator is 0 (the original scripts' convention).

    >>> safe_ratio(1, 4), safe_ratio(0, 0)
    (0.25, 0.0)
    """
    return float(numerator) / float(denominator) if denominator else 0.0


def f1_from(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall, 0.0 when both are 0.

    >>> f1_from(0.5, 1.0)
    0.6666666666666666
    >>> f1_from(0.0, 0.0)
    0.0
    """
    total = precision + recall
    return 2.0 * precision * recall / total if total else 0.0


def safe_ratios(numerators: np.ndarray, denominators: np.ndarray) -> np.ndarray:
    """`safe_ratio` elementwise, bit for bit (the same one division where the denominator is not 0).

    >>> safe_ratios(np.array([1.0, 0.0]), np.array([4.0, 0.0])).tolist()
    [0.25, 0.0]
    """
    nonzero = denominators != 0
    return np.where(nonzero, numerators / np.where(nonzero, denominators, 1.0), 0.0)


def f1s_from(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """`f1_from` elementwise, bit for bit (the same operations in the same order).

    >>> f1s_from(np.array([0.5, 0.0]), np.array([1.0, 0.0])).tolist()
    [0.6666666666666666, 0.0]
    """
    total = precision + recall
    nonzero = total != 0
    return np.where(nonzero, 2.0 * precision * recall / np.where(nonzero, total, 1.0), 0.0)
