"""`compare_correct`: the subset comparison's bootstrap by hand on three instances, against numpy's
percentile and McNemar, and against the docstring's algorithm written in JavaScript (run with node where it
is installed: the explorer's page must reproduce these numbers bit for bit)."""

from __future__ import annotations

import json
import random
import shutil
import subprocess

import numpy as np
import pytest

from biorab.errors import DataError
from biorab.results.subset import compare_correct, mulberry32


def test_three_instances_by_hand() -> None:
    # mulberry32(7) draws 50271532, 266108690, 4195786334, 3002305430, 2239590375, 1741702388, 2002453909,
    # 1030470827, 2376515373 (the JavaScript original gives the same); floor(x * 3 / 2^32), three per
    # resample: (0, 0, 2), (2, 1, 1), (1, 0, 1).
    draws = mulberry32(7)
    assert [(next(draws) * 3) >> 32 for _ in range(9)] == [0, 0, 2, 2, 1, 1, 1, 0, 1]
    # B - A per instance: -1, +1, +1; k per resample: -1 - 1 + 1 = -1, 1 + 1 + 1 = 3, 1 - 1 + 1 = 1.
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


JS = r"""
const [a, b, nBoot, seed] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
function mulberry32(s) { let x = s | 0; return () => { x = x + 0x6D2B79F5 | 0;
  let t = Math.imul(x ^ x >>> 15, 1 | x); t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
  return (t ^ t >>> 14) >>> 0; }; }
const n = a.length, next = mulberry32(seed), diff = a.map((x, i) => Number(b[i]) - Number(x)), ks = [];
for (let r = 0; r < nBoot; r++) { let k = 0;
  for (let i = 0; i < n; i++) k += diff[Math.floor(next() * n / 4294967296)]; ks.push(k); }
ks.sort((p, q) => p - q);
const bound = q => { const h = (ks.length - 1) * q, j = Math.floor(h), g = h - j;
  return (j + 1 >= ks.length ? ks[j] : ks[j] + g * (ks[j + 1] - ks[j])) / n; };
process.stdout.write(JSON.stringify([bound(0.025), bound(0.975)]));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_docstring_algorithm_in_javascript_gives_the_same_bounds() -> None:
    rng = random.Random(1)
    for n, n_boot, seed in ((57, 500, 0), (300, 1000, 12345), (5, 999, 2**32 + 3)):
        a = [rng.random() < 0.6 for _ in range(n)]
        b = [rng.random() < 0.7 for _ in range(n)]
        out = subprocess.run(["node", "-e", JS], input=json.dumps([a, b, n_boot, seed % 2**32]),
                             capture_output=True, text=True, check=True, timeout=60)
        c = compare_correct(a, b, n_boot=n_boot, seed=seed)
        assert json.loads(out.stdout) == [c.ci_low, c.ci_high]  # equal as doubles, not approximately


@pytest.mark.parametrize("name", ["biorab.results.subset", "biorab.results.folder"])
def test_doctests(name: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
