"""Two cells compared on a chosen subset of their instances: n, accuracy of each, Δ accuracy (B − A) with a
paired percentile-bootstrap 95% CI, and McNemar's p (`biorab.metrics.paired.mcnemar`).

The bootstrap is specified to the bit so that another implementation (the explorer's page, in JavaScript)
reproduces every number from the same inputs; `compare_correct` documents it. It does not use numpy's
generator (`biorab.metrics.bootstrap`): PCG64 and its seed hashing have no small exact JavaScript port,
mulberry32 has (32-bit integer operations only, ``Math.imul``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from biorab.errors import DataError

CONFIDENCE_TAILS = (0.025, 0.975)  # the 95% interval's quantiles, written as these two double literals
MAX_INSTANCES = 2**21  # below it, x * n < 2^53 for a 32-bit x: the index is exact in a double too
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class SubsetComparison:
    """Cell B against cell A on the same `n` instances (`compare_correct`).

    Attributes:
        n: the instances compared.
        accuracy_a, accuracy_b: the share right in each cell (``None`` when n is 0).
        delta: accuracy_b − accuracy_a.
        ci_low, ci_high: the paired percentile-bootstrap 95% interval of delta (``None``: n_boot 0 or n 0).
        only_a, only_b: instances right in A only, in B only (McNemar's discordant pairs).
        mcnemar_p: McNemar's two-sided p (exact binomial under 25 discordant pairs, else chi-square with
            continuity correction: `biorab.metrics.paired.mcnemar`); ``None`` when n is 0.
        mcnemar_method: ``"exact"`` or ``"chi2"``.
        n_boot, seed: the resampling's settings.
    """

    n: int
    accuracy_a: float | None
    accuracy_b: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    only_a: int
    only_b: int
    mcnemar_p: float | None
    mcnemar_method: str | None
    n_boot: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def compare_correct(correct_a: Sequence[bool], correct_b: Sequence[bool], *, n_boot: int = 1000,
                    seed: int = 0) -> SubsetComparison:
    """B against A on paired per-instance correctness (position i is the same instance in both).

    The paired bootstrap, exactly (so that JavaScript doubles give the same numbers):

    1. Draws come from one mulberry32 generator seeded with ``seed mod 2^32`` (`mulberry32`), one 32-bit
       draw ``x`` per index, in order: resample 1 draws its n indices, then resample 2, and so on.
    2. An index is ``floor(x * n / 2^32)`` (exact: n < 2^21).
    3. Resample b's statistic is the integer ``k_b = sum over its drawn indices i of (B_i - A_i)`` (B_i,
       A_i are 1 when right); its Δ accuracy is ``k_b / n``.
    4. With the k sorted ascending (m = n_boot of them) each bound is, for q = 0.025 then 0.975:
       ``h = (m - 1) * q``, ``j = floor(h)``, ``g = h - j``, ``v = k[j] + g * (k[j + 1] - k[j])`` (``k[j]``
       when j = m - 1), bound ``= v / n``: numpy's "linear" percentile, in this order of operations.

    The point values are ``sum(B) / n``, ``sum(A) / n`` and their difference ``(sum(B) - sum(A)) / n``.

    >>> c = compare_correct([True, False, False, True], [True, True, True, False], n_boot=200, seed=0)
    >>> c.n, c.delta, c.only_a, c.only_b, c.mcnemar_p
    (4, 0.25, 1, 2, 1.0)
    """
    from biorab.metrics.paired import mcnemar

    a, b = [bool(x) for x in correct_a], [bool(x) for x in correct_b]
    if len(a) != len(b):
        raise DataError(f"{len(a)} and {len(b)} instances: a paired comparison needs the same instances")
    n = len(a)
    if n >= MAX_INSTANCES:
        raise DataError(f"{n} instances: the reproducible bootstrap takes fewer than {MAX_INSTANCES}")
    if n == 0:
        return SubsetComparison(0, None, None, None, None, None, 0, 0, None, None, max(n_boot, 0), seed)
    test = mcnemar(a, b)
    diff = [int(y) - int(x) for x, y in zip(a, b, strict=True)]
    low = high = None
    if n_boot > 0:
        draws = mulberry32(seed)
        ks = sorted(sum(diff[(next(draws) * n) >> 32] for _ in range(n)) for _ in range(n_boot))
        low, high = (_quantile(ks, q) / n for q in CONFIDENCE_TAILS)
    right_a, right_b = sum(a), sum(b)
    return SubsetComparison(n, right_a / n, right_b / n, (right_b - right_a) / n, low, high, test.only_a,
                            test.only_b, test.p_value, test.method, n_boot, seed)


def _quantile(ks: Sequence[int], q: float) -> float:
    h = (len(ks) - 1) * q
    j = math.floor(h)
    if j + 1 >= len(ks):
        return float(ks[j])
    return ks[j] + (h - j) * (ks[j + 1] - ks[j])


def mulberry32(seed: int) -> Iterator[int]:
    """Tommy Ettinger's mulberry32 as 32-bit draws (the JavaScript original divides each by 2^32): in
    JavaScript, ``a = a + 0x6D2B79F5 | 0; t = Math.imul(a ^ a >>> 15, 1 | a); t = t + Math.imul(t ^ t >>> 7,
    61 | t) ^ t; return (t ^ t >>> 14) >>> 0``, starting from ``a = seed | 0``.

    >>> draws = mulberry32(0)
    >>> [next(draws) for _ in range(3)]
    [1144304738, 1416247, 958946056]
    """
    a = seed & _MASK
    while True:
        a = (a + 0x6D2B79F5) & _MASK
        t = ((a ^ (a >> 15)) * (1 | a)) & _MASK
        t = ((t + (((t ^ (t >> 7)) * (61 | t)) & _MASK)) & _MASK) ^ t
        yield (t ^ (t >> 14)) & _MASK
