"""Paired comparison: McNemar on hand-computed tables and the paired bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, chi2

from biorab.common.errors import DataError
from biorab.common.records import Prediction
from biorab.metrics import compare, mcnemar
from biorab.tasks import get_task


def _table(both: int, only_a: int, only_b: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return a, b


def test_mcnemar_exact_on_a_hand_computed_table() -> None:
    # b=3, c=7 -> 10 discordant pairs (< 25): p = 2 * (1 + 10 + 45 + 120) / 2^10 = 0.34375.
    result = mcnemar(*_table(both=20, only_a=3, only_b=7, neither=5))
    assert (result.only_a, result.only_b, result.method) == (3, 7, "exact")
    assert result.p_value == 0.34375
    assert result.p_value == pytest.approx(binomtest(3, 10, 0.5).pvalue, abs=1e-12)


def test_mcnemar_chi_square_with_continuity_correction() -> None:
    # b=10, c=25: (|10 - 25| - 1)^2 / 35 = 196 / 35 = 5.6; p = P(chi2_1 > 5.6).
    result = mcnemar(*_table(both=50, only_a=10, only_b=25, neither=15))
    assert result.method == "chi2"
    assert result.statistic == pytest.approx(5.6, abs=1e-12)
    assert result.p_value == pytest.approx(chi2.sf(5.6, 1), abs=1e-12)
    assert result.p_value == pytest.approx(0.017960477526, abs=1e-11)


def test_mcnemar_edge_cases() -> None:
    none = mcnemar(*_table(both=5, only_a=0, only_b=0, neither=5))
    assert (none.p_value, none.method) == (1.0, "exact")
    balanced = mcnemar(*_table(both=0, only_a=15, only_b=15, neither=0))
    assert (balanced.statistic, balanced.p_value) == (0.0, 1.0)
    with pytest.raises(DataError, match="same instances"):
        mcnemar([True], [True, False])


def _preds(labels: list[str | None]) -> list[Prediction]:
    return [Prediction(x, x or "", x is not None) for x in labels]


def test_identical_systems_have_zero_delta_and_p_one() -> None:
    golds = ["y", "n"] * 20
    preds = _preds(["y", "y"] * 20)
    result = compare(get_task("classification"), golds, preds, preds, n_boot=200, seed=0)
    assert (result.delta, result.ci_low, result.ci_high, result.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert result.metric == "micro_f1"
    assert result.mcnemar.p_value == 1.0


def test_clearly_better_system_is_significant() -> None:
    rng = np.random.default_rng(0)
    golds = [str(x) for x in rng.integers(0, 2, 200)]
    a = _preds([g if rng.random() < 0.55 else ("1" if g == "0" else "0") for g in golds])
    b = _preds([g if rng.random() < 0.9 else ("1" if g == "0" else "0") for g in golds])
    result = compare(get_task("classification"), golds, a, b, metric="accuracy", n_boot=500, seed=1)
    assert result.delta > 0.2
    assert result.ci_low is not None and result.ci_low > 0
    assert result.p_value == pytest.approx(2 / 501)  # no resample reverses the sign
    assert result.mcnemar.method == "chi2" and result.mcnemar.p_value < 1e-6


def test_paired_bootstrap_matches_a_direct_loop() -> None:
    rng = np.random.default_rng(3)
    golds = [str(x) for x in rng.integers(0, 3, 60)]
    a = _preds([g if rng.random() < 0.6 else "0" for g in golds])
    b = _preds([g if rng.random() < 0.7 else None for g in golds])
    result = compare(get_task("qa"), golds, a, b, metric="accuracy", n_boot=300, seed=5)
    ca = np.array([p.label == g for p, g in zip(a, golds, strict=True)], dtype=float)
    cb = np.array([p.label == g for p, g in zip(b, golds, strict=True)], dtype=float)
    draws = np.random.default_rng(5)
    deltas = []
    for _ in range(300):
        idx = draws.integers(0, 60, size=60)
        deltas.append(cb[idx].mean() - ca[idx].mean())
    low, high = np.percentile(deltas, [2.5, 97.5])
    deltas_arr = np.array(deltas)
    p = min(1.0, 2 * (min((deltas_arr <= 0).sum(), (deltas_arr >= 0).sum()) + 1) / 301)
    assert result.delta == pytest.approx(cb.mean() - ca.mean(), abs=1e-12)
    assert (result.ci_low, result.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert result.p_value == pytest.approx(p, abs=1e-12)


def test_triples_compare_on_f1_and_set_equality() -> None:
    golds = ["a|r|b", "c|r|d", "e|r|f"]
    a = [Prediction("a|r|b", "", True), Prediction(None, "", False), Prediction("x|r|y", "", True)]
    b = [Prediction("a|r|b", "", True), Prediction("c|r|d", "", True), Prediction("e|r|f\nx|r|y", "", True)]
    result = compare(get_task("triple_extraction"), golds, a, b, n_boot=50)
    assert result.metric == "f1"
    assert result.value_a == pytest.approx(0.4)  # p=2 g=3 c=1: P=1/2 R=1/3
    assert result.value_b == pytest.approx(6 / 7)  # p=4 g=3 c=3: P=3/4 R=1
    # Set equality: A right on 1 instance, B on 2 (the extra triple makes instance 3 wrong for B).
    assert (result.mcnemar.only_a, result.mcnemar.only_b) == (0, 1)
    assert math.isclose(result.mcnemar.p_value, 1.0)


def test_unknown_metric_for_the_task_is_an_error() -> None:
    with pytest.raises(DataError, match="cannot compare"):
        compare(get_task("qa"), ["(A)"], _preds(["(A)"]), _preds(["(A)"]), metric="head_f1")
