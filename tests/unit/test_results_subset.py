"""`compare_correct`: the subset comparison's bootstrap by hand on three instances, against numpy's
percentile and McNemar, and against the explorer's page scheme it is (`biorab.explorer.compare`, which
tests/integration/test_explorer_views_browser.py checks bit for bit against the page in Chromium)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from biorab.common.errors import DataError
from biorab.explorer.compare import mulberry32, paired_accuracy
from biorab.results.subset import compare_correct


def test_three_instances_by_hand() -> None:
    # mulberry32(7) draws 50271532, 266108690, 4195786334, 3002305430, 2239590375, 1741702388, 2002453909,
    # 1030470827, 2376515373 (the JavaScript original gives the same, as 32-bit integers; the scheme divides
    # them by 2^32); floor(u * 3), three per resample: (0, 0, 2), (2, 1, 1), (1, 0, 1).
    draws = mulberry32(7)
    assert [math.floor(next(draws) * 3) for _ in range(9)] == [0, 0, 2, 2, 1, 1, 1, 0, 1]
    # the pairs in the canonical order, B lost (-1), ties, B gained (+1): -1, +1, +1 (1 lost, 2 gained);
    # k per resample: -1 - 1 + 1 = -1, 1 + 1 + 1 = 3, 1 - 1 + 1 = 1.
    c = compare_correct([True, False, False], [False, True, True], n_boot=3, seed=7)
    assert (c.n, c.accuracy_a, c.accuracy_b) == (3, 1 / 3, 2 / 3)
    assert c.delta == pytest.approx(1 / 3)
    # sorted k = -1, 1, 3: h = 2 * 0.025 = 0.05 -> -1 + 0.05 * 2 = -0.9; h = 1.95 -> 1 + 0.95 * 2 = 2.9
    assert c.ci_low == pytest.approx(-0.9 / 3) and c.ci_high == pytest.approx(2.9 / 3)
    assert c.ci_low is not None and c.ci_high is not None
    assert [c.ci_low * 3, c.ci_high * 3] == pytest.approx(list(np.percentile([-1, 1, 3], [2.5, 97.5])))
    # McNemar: one discordant pair each way but 2 for B: exact, p = 2 * (C(3,0) + C(3,1)) / 8 = 1
    assert (c.only_a, c.only_b, c.mcnemar_p, c.mcnemar_method) == (1, 2, 1.0, "exact")


def test_empty_and_misaligned() -> None:
    empty = compare_correct([], [])
    assert empty.n == 0 and empty.delta is None and empty.ci_low is None and empty.mcnemar_p is None
    no_boot = compare_correct([True], [False], n_boot=0)
    assert no_boot.delta == -1.0 and no_boot.ci_low is None
    with pytest.raises(DataError, match="same instances"):
        compare_correct([True], [True, False])


def test_it_is_the_pages_scheme_with_b_as_the_cell() -> None:
    rng = random.Random(1)
    for n, n_boot, seed in ((57, 500, 0), (300, 1000, 12345), (5, 999, 3)):
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [rng.random() < 0.7 for _ in range(n)]
        c = compare_correct(a, b, n_boot=n_boot, seed=seed)
        page = paired_accuracy(a, b, n_boot=n_boot, seed=seed)
        assert (c.n, c.only_a, c.only_b) == (page.n, page.lost, page.gained)
        assert (c.delta, c.ci_low, c.ci_high, c.mcnemar_p) == (page.delta, page.ci_low, page.ci_high,
                                                               page.mcnemar_p)


@pytest.mark.parametrize("name", ["biorab.results.subset", "biorab.results.folder"])
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
