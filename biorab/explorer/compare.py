"""The explorer's pinned-baseline statistics, in Python: the very scheme ``explorer.js`` computes in the
page (`pairedAccuracy`), so a test can compare the page's numbers with these on the same instances.

A cell is compared with the baseline cell on the instances both hold (with evidence attribution); per pair
the cell *gained* (baseline wrong, cell right), *lost* (baseline right, cell wrong) or tied. Then:

- ``delta`` = accuracy(cell) − accuracy(baseline) = (gained − lost) / n;
- a paired bootstrap interval of ``delta``: `n_boot` resamples of the n pairs with replacement. The pairs
  are put in a canonical order first, ``lost`` pairs (−1), then ties (0), then ``gained`` pairs (+1), so the
  interval depends only on (n, gained, lost), not on instance order. Draw j of resample b takes pair
  ``floor(u * n)`` where u is the next output of one mulberry32 generator seeded with `seed` (re-seeded
  for every comparison), b-major then j; the interval is the 2.5 and 97.5 percentiles of the resampled
  deltas, interpolated linearly as ``numpy.percentile`` does (its default method);
- McNemar's two-sided p on the discordant pairs: `biorab.metrics.paired.mcnemar` (exact binomial below
  25 discordant pairs, else chi-square with continuity correction).

mulberry32 (Tommy Ettinger's 32-bit generator), with ``a`` the 32-bit state::

    a = (a + 0x6D2B79F5) mod 2^32
    t = imul(a ^ (a >>> 15), a | 1)
    t = (t + imul(t ^ (t >>> 7), t | 61)) ^ t
    u = ((t ^ (t >>> 14)) mod 2^32) / 2^32
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from biorab.common.errors import DataError
from biorab.metrics.paired import mcnemar

N_BOOT = 1000
SEED = 20240601  # the page's seed (explorer.js, BOOT_SEED)
_MASK = 0xFFFFFFFF


def mulberry32(seed: int) -> Iterator[float]:
    """The uniform draws in [0, 1) of mulberry32 seeded with `seed` (as the page's JavaScript computes
    them, 32-bit unsigned arithmetic)."""
    a = seed & _MASK
    while True:
        a = (a + 0x6D2B79F5) & _MASK
        t = ((a ^ (a >> 15)) * (a | 1)) & _MASK
        t = ((t + (((t ^ (t >> 7)) * (t | 61)) & _MASK)) & _MASK) ^ t
        yield ((t ^ (t >> 14)) & _MASK) / 4294967296.0


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """`numpy.percentile`'s default (linear) interpolation of an ascending sequence, computed as the page
    computes it (numpy's own two-sided lerp, so both give the same floating-point result)."""
    position = q / 100.0 * (len(sorted_values) - 1)
    below = math.floor(position)
    frac = position - below
    a = sorted_values[below]
    b = sorted_values[min(below + 1, len(sorted_values) - 1)]
    diff = b - a
    return b - diff * (1.0 - frac) if frac >= 0.5 else a + diff * frac


@dataclass(frozen=True)
class PairedAccuracy:
    """A cell against the baseline on n paired instances."""

    n: int
    gained: int  # baseline wrong, cell right
    lost: int  # baseline right, cell wrong
    accuracy_base: float | None
    accuracy_cell: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    mcnemar_p: float | None


def paired_accuracy(base: Sequence[bool], cell: Sequence[bool], *, n_boot: int = N_BOOT,
                    seed: int = SEED) -> PairedAccuracy:
    """The baseline's and the cell's correctness on the same instances (aligned), compared."""
    if len(base) != len(cell):
        raise DataError(f"{len(base)} baseline and {len(cell)} cell instances: a paired comparison needs "
                        "the same instances")
    n = len(base)
    gained = sum(1 for b, c in zip(base, cell, strict=True) if c and not b)
    lost = sum(1 for b, c in zip(base, cell, strict=True) if b and not c)
    if n == 0:
        return PairedAccuracy(0, 0, 0, None, None, None, None, None, None)
    low, high = bootstrap_delta(n, gained, lost, n_boot=n_boot, seed=seed)
    return PairedAccuracy(n, gained, lost, sum(map(bool, base)) / n, sum(map(bool, cell)) / n,
                          (gained - lost) / n, low, high, mcnemar(list(base), list(cell)).p_value)


def bootstrap_delta(n: int, gained: int, lost: int, *, n_boot: int = N_BOOT,
                    seed: int = SEED) -> tuple[float, float]:
    """The 95% percentile interval of the paired bootstrap of (gained − lost) / n (scheme above)."""
    if n <= 0 or gained < 0 or lost < 0 or gained + lost > n:
        raise DataError(f"no paired bootstrap of n={n}, gained={gained}, lost={lost}")
    draws = mulberry32(seed)
    first_gain = n - gained
    deltas = []
    for _ in range(n_boot):
        total = 0
        for _ in range(n):
            j = math.floor(next(draws) * n)
            total += -1 if j < lost else 1 if j >= first_gain else 0
        deltas.append(total / n)
    deltas.sort()
    return percentile(deltas, 2.5), percentile(deltas, 97.5)
