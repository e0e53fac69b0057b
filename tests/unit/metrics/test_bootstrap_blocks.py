"""The bootstrap in blocks (issue 45): the same resamples as one draw per resample, and every rate's value
and interval bit for bit what the per-resample loop (`metric_values`: reweight, then `compute`) gives."""

from __future__ import annotations

import numpy as np
import pytest

from biorab.attribution.rates import Rate, RateTable, rates
from biorab.metrics.bootstrap import BLOCK_ELEMENTS, metric_values, resample_blocks, resample_weights


@pytest.mark.parametrize("n", [1, 2, 7, 50, 613, BLOCK_ELEMENTS // 3 + 1])
def test_blocks_are_the_per_resample_draws(n: int) -> None:
    n_boot = 40 if n > 1000 else 300
    rng = np.random.default_rng(17)  # a second computation: one draw of n per resample
    expected = [np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float) for _ in range(n_boot)]
    blocks = list(resample_blocks(n, n_boot, 17))
    assert len(blocks) > 1 or n_boot * n <= BLOCK_ELEMENTS
    got = np.concatenate(blocks)
    assert got.shape == (n_boot, n)
    assert all(np.array_equal(w, e) for w, e in zip(got, expected, strict=True))
    assert all(np.array_equal(w, e) for w, e in zip(resample_weights(n, n_boot, 17), expected, strict=True))


@pytest.mark.parametrize("seed", range(6))
def test_rates_in_blocks_equal_the_loop_bit_for_bit(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    flags = [rng.random(n) < p for p in (0.3, 0.6, 0.5, 0.1)]
    columns = {"plain": (flags[0], flags[1]),
               "excess": (flags[0], flags[2], flags[1]),
               "rare": (flags[0], flags[3]),  # many resamples with an empty denominator (nan)
               "never": (flags[0], np.zeros(n, dtype=bool))}
    batched = rates({k: tuple(list(c) for c in v) for k, v in columns.items()}, n_boot=500, seed=seed)
    table = RateTable({k: tuple(np.asarray(c, dtype=bool) for c in v) for k, v in columns.items()},
                      np.ones(n))
    loop = metric_values(table, [Rate(k) for k in columns], n_boot=500, seed=seed)  # type: ignore[misc]
    for name in columns:
        a, b = batched[name], loop[name]
        assert (a.value, a.ci_low, a.ci_high) == (b.value, b.ci_low, b.ci_high), name
    assert batched["never"].ci_low is None
