"""The headline metrics a block of resamples at once (`compute_many`: accuracy and micro P/R/F1 of
single-label tasks, the triple metrics): every value, and the paired bootstrap of the report's significance
marks, bit for bit what one `reweight` and `compute` per resample gives (the loop recomputed here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from biorab.common.build import build
from biorab.common.registry import METRICS
from biorab.metrics.bootstrap import bootstrap_samples, percentile_interval, resample_blocks
from biorab.metrics.confusion import label_table
from biorab.metrics.paired import paired_bootstrap
from biorab.metrics.triples import triple_table

LABEL_METRICS = ["accuracy", "micro_precision", "micro_recall", "micro_f1", "f1", "precision"]
TRIPLE_METRICS = ["precision", "recall", "f1", "head_f1", "relation_precision", "tail_recall"]


def labels(seed: int, n: int) -> Any:
    rng = np.random.default_rng(seed)
    names = ["a", "b", "c", "d"]
    golds = [names[i] for i in rng.integers(0, 4, n)]
    # right half the time, else another label, one outside the set, or a parse failure
    predicted = [g if rng.random() < 0.5 else rng.choice([*names, "zzz", None]) for g in golds]
    return label_table(golds, predicted, [p is None for p in predicted], names)


def triples(seed: int, n: int) -> Any:
    rng = np.random.default_rng(seed)

    def some() -> frozenset[tuple[str, str, str]]:
        return frozenset((f"h{rng.integers(3)}", f"r{rng.integers(2)}", f"t{rng.integers(3)}")
                         for _ in range(int(rng.integers(0, 4))))

    golds = [some() for _ in range(n)]
    # a tenth fail to parse; some instances have no gold and no prediction (0/0 ratios)
    return triple_table(golds, [None if rng.random() < 0.1 else some() for _ in range(n)])


CASES = [(labels, LABEL_METRICS), (triples, TRIPLE_METRICS)]


@pytest.mark.parametrize(("make", "names"), CASES)
@pytest.mark.parametrize("n", [1, 3, 40, 613])
def test_each_resample_equals_reweight_then_compute(make: Callable[[int, int], Any], names: list[str],
                                                    n: int) -> None:
    table = make(n, n)
    for name in names:
        metric = build(METRICS, name)
        for block in resample_blocks(table.n, 300, seed=n):
            got = metric.compute_many(table, block)
            want = np.array([metric.compute(table.reweight(w)) for w in block])
            assert np.array_equal(got, want), name  # bit for bit, no tolerance


@pytest.mark.parametrize(("make", "names"), CASES)
def test_paired_bootstrap_equals_the_per_resample_loop(make: Callable[[int, int], Any],
                                                       names: list[str]) -> None:
    a, b = make(1, 157), make(2, 157)
    for name in names:
        metric = build(METRICS, name)

        def delta(w: np.ndarray, m: Any = metric) -> list[float]:
            return [m.compute(b.reweight(w)) - m.compute(a.reweight(w))]

        deltas = bootstrap_samples(delta, a.n, 1000, 9, 1)[:, 0]
        low, high = percentile_interval(deltas)
        extreme = min(int((deltas <= 0).sum()), int((deltas >= 0).sum())) + 1
        assert paired_bootstrap(a, b, metric, n_boot=1000, seed=9) == (low, high, 2 * extreme / 1001)


def test_macro_metrics_keep_the_loop() -> None:
    assert not hasattr(build(METRICS, "macro_f1"), "compute_many")  # float sums over labels: order matters
