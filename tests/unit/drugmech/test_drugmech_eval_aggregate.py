"""Run statistics, the Student-t quantile and the stratified BCa bootstrap (spec §12)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biorab.drugmech.scoring.aggregate import regularized_beta, run_stats, stratified_bca, t_quantile


@pytest.mark.parametrize(
    ("p", "df", "expected"),  # published t-table values
    [
        (0.95, 1, 6.313752),
        (0.95, 4, 2.131847),
        (0.975, 10, 2.228139),
        (0.05, 3, -2.353363),
        (0.95, 30, 1.697261),
    ],
)
def test_t_quantile(p: float, df: int, expected: float) -> None:
    assert t_quantile(p, df) == pytest.approx(expected, abs=1e-6)


def test_regularized_beta_closed_forms() -> None:
    assert regularized_beta(1.0, 1.0, 0.3) == pytest.approx(0.3)  # uniform
    assert regularized_beta(2.0, 1.0, 0.5) == pytest.approx(0.25)  # x^2
    assert regularized_beta(0.5, 0.5, 0.5) == pytest.approx(0.5)


def test_run_stats_hand_computed() -> None:
    s = run_stats([0.8, 0.9, 0.85, 0.88, 0.87])
    # deviations -0.06, 0.04, -0.01, 0.02, 0.01: sum of squares 0.0058
    assert s.mean == pytest.approx(0.86)
    assert s.std == pytest.approx(math.sqrt(0.0058 / 5))
    half = 2.1318467863 * math.sqrt(0.0058 / 4) / math.sqrt(5)
    assert (s.ci_low, s.ci_high) == (pytest.approx(0.86 - half), pytest.approx(0.86 + half))
    assert (s.min, s.max, s.runs) == (0.8, 0.9, 5)
    single = run_stats([0.7])
    assert (single.std, single.ci_low, single.ci_high) == (0.0, None, None)


def test_bca_matches_scipy_on_one_stratum() -> None:
    stats = pytest.importorskip("scipy.stats")
    x = (np.random.default_rng(1).random(300) < 0.7).astype(float)
    ours = stratified_bca([x], n_resamples=9999, seed=0)
    ref = stats.bootstrap((x,), np.mean, n_resamples=9999, confidence_level=0.9, method="BCa", random_state=0)
    # Different random streams: agreement within the Monte-Carlo error of the interval ends.
    assert ours.ci_low == pytest.approx(ref.confidence_interval.low, abs=0.006)
    assert ours.ci_high == pytest.approx(ref.confidence_interval.high, abs=0.006)
    assert ours.stderr == pytest.approx(float(np.sqrt(x.mean() * (1 - x.mean()) / x.size)), rel=0.05)


def test_bca_is_seeded_and_stratified() -> None:
    strata = [[1, 1, 1, 0] * 25, [0, 0, 0, 1, 0] * 20]
    a = stratified_bca(strata, n_resamples=2000, seed=7)
    assert a == stratified_bca(strata, n_resamples=2000, seed=7)
    assert a.n == 200
    assert a.ci_low < 0.475 < a.ci_high  # pooled mean (75 + 20) / 200
    # Stratification removes the between-file variance: narrower than the unstratified bootstrap.
    pooled = stratified_bca([strata[0] + strata[1]], n_resamples=2000, seed=7)
    assert a.ci_high - a.ci_low < pooled.ci_high - pooled.ci_low


def test_bca_without_spread_and_for_non_binary_data() -> None:
    flat = stratified_bca([[1.0] * 10, [1.0] * 5], n_resamples=100)
    assert (flat.mean, flat.ci_low, flat.ci_high, flat.stderr) == (1.0, 1.0, 1.0, 0.0)
    scores = stratified_bca([[0.1, 0.5, 0.9, 0.7], [0.2, 0.4]], n_resamples=500, seed=1)
    assert scores.ci_low < 0.4666 < scores.ci_high
    with pytest.raises(ValueError):
        stratified_bca([[]])
