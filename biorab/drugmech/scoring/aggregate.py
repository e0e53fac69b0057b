"""Statistics over runs and over files (spec §12): per-cell mean ± SD / t-interval, and the stratified BCa
bootstrap of grouped accuracies.

Pure numpy + stdlib (the Student-t quantile comes from a regularised incomplete beta evaluated here, so no
scipy is needed). Every random draw takes an explicit seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist

import numpy as np

CONFIDENCE = 0.90
N_RESAMPLES = 9999
DEFAULT_SEED = 42


@dataclass(frozen=True)
class RunStats:
    """A metric over independent runs: mean, SD (ddof=0, what the original prints as ±), min, max, and a
    two-sided t-interval (ddof=1; ours, None with fewer than 2 runs)."""

    mean: float
    std: float
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None
    runs: int

    def to_json(self) -> dict[str, float | int | None]:
        return asdict(self)


@dataclass(frozen=True)
class BootstrapCI:
    """A grouped accuracy: bootstrap mean, BCa interval, bootstrap SD (ddof=1) and the number of samples."""

    mean: float
    ci_low: float
    ci_high: float
    stderr: float
    n: int

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularised incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t with `df` degrees of freedom (bisection on the exact CDF).

    >>> round(t_quantile(0.95, 4), 6)
    2.131847
    """
    if not 0.0 < p < 1.0 or df < 1:
        raise ValueError(f"need 0 < p < 1 and df >= 1, got p={p}, df={df}")

    def cdf(t: float) -> float:
        tail = 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))
        return 1.0 - tail if t >= 0 else tail

    lo, hi = -1e4, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2.0


def run_stats(values: Sequence[float], *, confidence: float = CONFIDENCE) -> RunStats:
    """Mean, SD (ddof=0), min, max and the t-interval ``mean ± t((1+c)/2, n-1)·s/√n`` (s with ddof=1)."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("run_stats needs at least one run")
    mean = float(arr.mean())
    low = high = None
    if arr.size > 1:
        half = (
            t_quantile((1.0 + confidence) / 2.0, arr.size - 1) * float(arr.std(ddof=1)) / math.sqrt(arr.size)
        )
        low, high = mean - half, mean + half
    return RunStats(
        mean, float(arr.std(ddof=0)), float(arr.min()), float(arr.max()), low, high, int(arr.size)
    )


def _resample_means(strata: Sequence[np.ndarray], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Pooled means of resamples drawn with replacement within each stratum."""
    total = np.zeros(n_resamples)
    for x in strata:
        values = np.unique(x)
        if values.size <= 2 and np.all(np.isin(values, (0.0, 1.0))):
            # 0/1 data: the count of ones in a resample is Binomial(n, p), the same distribution as drawing
            # n items with replacement, at a fraction of the cost.
            total += rng.binomial(x.size, float(x.mean()), size=n_resamples)
        else:
            total += x[rng.integers(0, x.size, size=(n_resamples, x.size))].sum(axis=1)
    return total / sum(x.size for x in strata)


def _acceleration(pooled: np.ndarray) -> float:
    """The BCa acceleration from the leave-one-out (jackknife) means of the pooled data."""
    n = pooled.size
    jack = (pooled.sum() - pooled) / (n - 1)
    dev = jack.mean() - jack
    den = 6.0 * float((dev**2).sum()) ** 1.5
    return float((dev**3).sum()) / den if den > 0 else 0.0


def stratified_bca(
    strata: Sequence[Sequence[float]],
    *,
    confidence: float = CONFIDENCE,
    n_resamples: int = N_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> BootstrapCI:
    """Stratified BCa bootstrap of the pooled mean (spec §12.2).

    Each stratum (a query file of the group) is resampled with replacement within itself; the
    bias-correction uses scipy's percentile-of-score rule and the acceleration a jackknife over the pooled
    data. With no spread at all the interval collapses to the mean.
    """
    arrays = [np.asarray(s, dtype=float) for s in strata if len(s) > 0]
    if not arrays:
        raise ValueError("stratified_bca needs at least one non-empty stratum")
    pooled = np.concatenate(arrays)
    theta = float(pooled.mean())
    boot = _resample_means(arrays, n_resamples, np.random.default_rng(seed))
    stderr = float(boot.std(ddof=1)) if n_resamples > 1 else 0.0
    if np.all(pooled == pooled[0]) or pooled.size < 2:
        return BootstrapCI(float(boot.mean()), theta, theta, stderr, int(pooled.size))
    normal = NormalDist()
    share = ((boot < theta).sum() + (boot <= theta).sum()) / (2.0 * n_resamples)
    share = min(max(share, 1.0 / (2 * n_resamples)), 1.0 - 1.0 / (2 * n_resamples))
    z0, accel = normal.inv_cdf(share), _acceleration(pooled)
    bounds = []
    for z in (normal.inv_cdf((1.0 - confidence) / 2.0), normal.inv_cdf((1.0 + confidence) / 2.0)):
        level = normal.cdf(z0 + (z0 + z) / (1.0 - accel * (z0 + z)))
        bounds.append(float(np.percentile(boot, 100.0 * level)))
    return BootstrapCI(float(boot.mean()), bounds[0], bounds[1], stderr, int(pooled.size))
