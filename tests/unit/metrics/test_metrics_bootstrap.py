"""Seeded percentile bootstrap: deterministic, brackets the estimate, equals a direct resampling loop."""

from __future__ import annotations

import numpy as np
import pytest

from biorab.common.records import Prediction
from biorab.metrics import score
from biorab.metrics.bootstrap import percentile_interval, resample_weights
from biorab.tasks import get_task


def _predictions(n: int, seed: int) -> tuple[list[str], list[Prediction]]:
    rng = np.random.default_rng(seed)
    golds = [str(x) for x in rng.integers(0, 3, n)]
    predicted = [g if rng.random() < 0.6 else str(rng.integers(0, 3)) for g in golds]
    failed = rng.random(n) < 0.1
    return golds, [
        Prediction(None, "?", False) if f else Prediction(p, p, True)
        for p, f in zip(predicted, failed, strict=True)
    ]


def test_deterministic_under_a_seed_and_contains_the_estimate() -> None:
    golds, predictions = _predictions(120, seed=5)
    first = score(get_task("classification"), golds, predictions, n_boot=300, seed=11)
    again = score(get_task("classification"), golds, predictions, n_boot=300, seed=11)
    other = score(get_task("classification"), golds, predictions, n_boot=300, seed=12)
    assert first.to_json() == again.to_json()
    assert first.to_json() != other.to_json()
    for name, value in first.metrics.items():
        assert value.ci_low is not None and value.ci_high is not None
        assert value.ci_low <= value.value <= value.ci_high, name
        assert value.ci_low < value.ci_high, name


def test_matches_a_direct_resampling_loop() -> None:
    golds, predictions = _predictions(80, seed=1)
    report = score(get_task("classification"), golds, predictions, n_boot=200, seed=7)
    correct = np.array([p.label == g for g, p in zip(golds, predictions, strict=True)], dtype=float)
    rng = np.random.default_rng(7)
    direct = [correct[rng.integers(0, 80, size=80)].mean() for _ in range(200)]
    low, high = np.percentile(direct, [2.5, 97.5])
    assert report.metrics["accuracy"].ci_low == pytest.approx(low, abs=1e-12)
    assert report.metrics["accuracy"].ci_high == pytest.approx(high, abs=1e-12)


def test_triple_bootstrap_is_deterministic_and_brackets() -> None:
    golds = ["a|r|b", "c|r|d", "e|s|f", "g|r|h"] * 10
    predictions = [Prediction(g if i % 3 else "x|r|y", "", True) for i, g in enumerate(golds)]
    first = score(get_task("triple_extraction"), golds, predictions, n_boot=100, seed=0)
    again = score(get_task("triple_extraction"), golds, predictions, n_boot=100, seed=0)
    assert first.to_json() == again.to_json()
    f1 = first.metrics["f1"]
    assert f1.ci_low is not None and f1.ci_high is not None
    assert f1.ci_low <= f1.value <= f1.ci_high


def test_no_bootstrap_gives_null_intervals() -> None:
    golds, predictions = _predictions(10, seed=0)
    report = score(get_task("classification"), golds, predictions, n_boot=0)
    assert report.to_json()["metrics"]["accuracy"]["ci_low"] is None


def test_resample_weights_sum_to_n_and_interval_ignores_undefined() -> None:
    assert all(w.sum() == 7 for w in resample_weights(7, 5, seed=3))
    low, high = percentile_interval(np.array([np.nan, 1.0, 2.0, 3.0]))
    assert (low, high) == (pytest.approx(1.05), pytest.approx(2.95))
