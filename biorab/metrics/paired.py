"""Paired comparison of two prediction sets on the same instances: paired bootstrap and McNemar."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from biorab.common.build import build
from biorab.common.errors import DataError
from biorab.common.records import Prediction
from biorab.common.registry import METRICS
from biorab.metrics.base import InstanceTable, Metric
from biorab.metrics.bootstrap import bootstrap_samples, percentile_interval, resample_blocks
from biorab.metrics.tables import ScoredTask, instance_table, resolve_labels

EXACT_BELOW = 25  # discordant pairs under which McNemar uses the exact binomial test


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in input order: the step-down correction of the family-wise error over
    the p-values of one table (`holm_or_none` skips the missing ones).

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted = [0.0] * len(p_values)
    running = 0.0
    m = len(p_values)
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = round(running, 12)
    return adjusted


def holm_or_none(p_values: Sequence[float | None]) -> list[float | None]:
    """`holm` over the p-values that exist, in input order; a missing one stays missing and is not counted.

    >>> holm_or_none([0.01, None, 0.04])
    [0.02, None, 0.04]
    """
    present = [p for p in p_values if p is not None]
    adjusted = iter(holm(present))
    return [None if p is None else next(adjusted) for p in p_values]


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test on per-instance correctness.

    Attributes:
        only_a: instances that system A gets right and B gets wrong (b).
        only_b: instances that B gets right and A gets wrong (c).
        statistic: chi-square with continuity correction, or min(b, c) for the exact test.
        p_value: two-sided p-value.
        method: ``"exact"`` (binomial, b + c < `EXACT_BELOW`) or ``"chi2"``.
    """

    only_a: int
    only_b: int
    statistic: float
    p_value: float
    method: str


def mcnemar(
    correct_a: Sequence[bool] | np.ndarray,
    correct_b: Sequence[bool] | np.ndarray,
    *,
    exact_below: int = EXACT_BELOW,
) -> McNemarResult:
    """McNemar's test: exact two-sided binomial for few discordant pairs, else chi-square (1 df) with
    continuity correction ``max(0, |b - c| - 1)^2 / (b + c)``.

    b=3, c=7: p = 2 * P(X <= 3) with X ~ Binomial(10, 1/2) = 2 * 176 / 1024:

    >>> mcnemar([True] * 3 + [False] * 7, [False] * 3 + [True] * 7).p_value
    0.34375
    """
    a, b = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape:
        raise DataError(f"{a.size} and {b.size} instances: a paired test needs the same instances")
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    discordant = only_a + only_b
    if discordant < exact_below:
        smaller = min(only_a, only_b)
        tail = sum(math.comb(discordant, k) for k in range(smaller + 1)) / 2.0**discordant
        return McNemarResult(only_a, only_b, float(smaller), min(1.0, 2.0 * tail), "exact")
    statistic = max(0.0, abs(only_a - only_b) - 1.0) ** 2 / discordant
    # Survival function of chi-square with one degree of freedom.
    return McNemarResult(only_a, only_b, statistic, math.erfc(math.sqrt(statistic / 2.0)), "chi2")


@dataclass(frozen=True)
class PairedComparison:
    """System B minus system A on one metric, with a paired bootstrap interval and p-value, and McNemar."""

    metric: str
    value_a: float
    value_b: float
    delta: float
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    n: int
    n_boot: int
    mcnemar: McNemarResult

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def paired_bootstrap(
    table_a: InstanceTable, table_b: InstanceTable, metric: Metric, *, n_boot: int, seed: int
) -> tuple[float | None, float | None, float | None]:
    """Percentile interval of delta = metric(B) - metric(A) on shared resamples, and a two-sided p-value.

    The p-value is ``2 * min(#(delta* <= 0) + 1, #(delta* >= 0) + 1) / (n_boot + 1)``, capped at 1: how
    often the resampled difference has the opposite sign (or is zero), with the usual +1 correction.
    """
    if n_boot <= 0:
        return None, None, None
    many = getattr(metric, "compute_many", None)
    if many is not None:  # a block of resamples at once (`BatchMetric`): the same deltas, bit for bit
        deltas = np.concatenate([many(table_b, w) - many(table_a, w)
                                 for w in resample_blocks(table_a.n, n_boot, seed)])
    else:
        deltas = bootstrap_samples(
            lambda w: [metric.compute(table_b.reweight(w)) - metric.compute(table_a.reweight(w))],
            table_a.n,
            n_boot,
            seed,
            1,
        )[:, 0]
    deltas = deltas[~np.isnan(deltas)]
    if deltas.size == 0:
        return None, None, None
    low, high = percentile_interval(deltas)
    extreme = min(int((deltas <= 0).sum()), int((deltas >= 0).sum())) + 1
    return low, high, min(1.0, 2.0 * extreme / (deltas.size + 1))


def compare(
    kind: ScoredTask,
    golds: Sequence[str],
    predictions_a: Sequence[Prediction],
    predictions_b: Sequence[Prediction],
    *,
    metric: str | None = None,
    labels: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    triple_matching: str = "normalized",
) -> PairedComparison:
    """Compare system B with system A on the same instances.

    Args:
        kind: the task type (`biorab.tasks.get_task`).
        golds: canonical gold labels shared by both systems.
        predictions_a: the baseline's parsed predictions, aligned with `golds`.
        predictions_b: the other system's predictions, aligned with `golds`.
        metric: a metric of the task (default its headline metric, `TaskType.headline`).
        labels: label set of a single-label task (default: sorted gold labels).
        n_boot: paired bootstrap resamples.
        seed: seed of the resampling.
        triple_matching: as in `biorab.metrics.score`.

    Raises:
        DataError: misaligned inputs, bad golds, or a metric that does not belong to the task.
    """
    name = metric or kind.headline
    comparable = [m for m in kind.metrics if m not in ("auroc", "auprc")]
    if name not in comparable:
        raise DataError(f"metric {name!r} cannot compare {kind.name} predictions; use one of {comparable}")
    if labels is None and kind.closed:
        labels = resolve_labels(golds, None)
    table_a = instance_table(kind, golds, predictions_a, labels=labels, triple_matching=triple_matching)
    table_b = instance_table(kind, golds, predictions_b, labels=labels, triple_matching=triple_matching)
    scorer: Metric = build(METRICS, name)
    low, high, p_value = paired_bootstrap(table_a, table_b, scorer, n_boot=n_boot, seed=seed)
    value_a, value_b = scorer.compute(table_a), scorer.compute(table_b)
    return PairedComparison(
        metric=name,
        value_a=value_a,
        value_b=value_b,
        delta=value_b - value_a,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        n=len(golds),
        n_boot=max(n_boot, 0),
        mcnemar=mcnemar(table_a.correct, table_b.correct),
    )
