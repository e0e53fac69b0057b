"""Two cells compared on a chosen subset of their instances: n, accuracy of each, Δ accuracy (B − A) with a
paired percentile-bootstrap 95% CI, and McNemar's p (`biorab.metrics.paired.mcnemar`).

The statistics are the explorer page's, by the one implementation of its scheme
(`biorab.explorer.compare.paired_accuracy`, which ``explorer-stats.js`` reproduces bit for bit): so the
numbers a notebook gets for a subset equal the numbers the page shows for the same subset. The bootstrap
does not use numpy's generator (`biorab.metrics.bootstrap`): PCG64 has no small exact JavaScript port,
mulberry32 has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from biorab.common.errors import DataError
from biorab.explorer.compare import N_BOOT, SEED, paired_accuracy
from biorab.metrics.paired import mcnemar

MAX_INSTANCES = 2**21  # below it, u * n is exact in a double for every 32-bit draw u * 2^32


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


def compare_correct(correct_a: Sequence[bool], correct_b: Sequence[bool], *, n_boot: int = N_BOOT,
                    seed: int = SEED) -> SubsetComparison:
    """B against A on paired per-instance correctness (position i is the same instance in both).

    A is the baseline and B the cell of `biorab.explorer.compare.paired_accuracy`, whose docstring writes
    the bootstrap out exactly: the pairs in a canonical order (B lost, tie, B gained), so the interval
    depends on (n, only_a, only_b) alone; one mulberry32 generator seeded with `seed`; numpy's linear
    percentile. The defaults are the page's (1,000 resamples, its seed).

    >>> c = compare_correct([True, False, False, True], [True, True, True, False], n_boot=200, seed=0)
    >>> c.n, c.delta, c.only_a, c.only_b, c.mcnemar_p
    (4, 0.25, 1, 2, 1.0)
    """
    a, b = [bool(x) for x in correct_a], [bool(x) for x in correct_b]
    if len(a) != len(b):
        raise DataError(f"{len(a)} and {len(b)} instances: a paired comparison needs the same instances")
    n = len(a)
    if n >= MAX_INSTANCES:
        raise DataError(f"{n} instances: the reproducible bootstrap takes fewer than {MAX_INSTANCES}")
    if n == 0:
        return SubsetComparison(0, None, None, None, None, None, 0, 0, None, None, max(n_boot, 0), seed)
    test = mcnemar(a, b)
    paired = paired_accuracy(a, b, n_boot=max(n_boot, 1), seed=seed)
    low, high = (paired.ci_low, paired.ci_high) if n_boot > 0 else (None, None)
    right_a, right_b = sum(a), sum(b)
    return SubsetComparison(n, right_a / n, right_b / n, (right_b - right_a) / n, low, high, test.only_a,
                            test.only_b, test.p_value, test.method, n_boot, seed)
