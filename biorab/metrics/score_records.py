"""The result records of scoring: one `MetricValue` per metric and the `ScoreReport` that holds them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class MetricValue:
    """A point estimate with its bootstrap confidence interval.

    Attributes:
        value: the metric on all instances; ``None`` when the metric is undefined on them (e.g. a
            negative-awareness rate whose denominator is zero).
        ci_low: lower end of the percentile bootstrap interval; ``None`` without bootstrap
            (``n_boot=0``) or when the metric was undefined on every resample.
        ci_high: upper end, as `ci_low`.
    """

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None

    def to_json(self) -> dict[str, float | None]:
        return {
            "value": _finite(self.value),
            "ci_low": _finite(self.ci_low),
            "ci_high": _finite(self.ci_high),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> MetricValue:
        return cls(value=raw.get("value"), ci_low=raw.get("ci_low"), ci_high=raw.get("ci_high"))


def _finite(x: float | None) -> float | None:
    # JSON has no NaN; an undefined number is written as null.
    return None if x is None or math.isnan(x) else float(x)


@dataclass(frozen=True)
class ScoreReport:
    """Every metric of one scored prediction set.

    Attributes:
        metrics: metric name -> value and CI, in the task's canonical order.
        n: number of scored instances.
        parse_failures: predictions with ``ok=False``.
        skipped: metric name -> why it was not computed (e.g. AUROC without per-label scores); not part of
            `to_json`, whose shape is fixed.
    """

    metrics: dict[str, MetricValue]
    n: int
    parse_failures: int
    skipped: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The fixed shape ``{"metrics": {NAME: {"value", "ci_low", "ci_high"}}, "n", "parse_failures"}``."""
        return {
            "metrics": {name: value.to_json() for name, value in self.metrics.items()},
            "n": self.n,
            "parse_failures": self.parse_failures,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ScoreReport:
        metrics = {name: MetricValue.from_json(v) for name, v in raw["metrics"].items()}
        return cls(metrics=metrics, n=int(raw["n"]), parse_failures=int(raw["parse_failures"]))
