"""Seeded sampling of Delete/Invert positives, uniform or stratified by the target node's type.

``uniform`` draws ``n`` links without replacement (the spec's reading of the paper). ``pool`` stratifies by
target type in the pool's own proportions (the same expected mix as ``uniform``, without its variance: one
seed can otherwise land several points off). ``release`` stratifies to the target-type mix of the paper's
released files (``release/DataStats.txt``), which differs from the pool's: for surface links the release
has 27.2% GeneFamily targets where the pool has 21.5%.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from biorab.common.errors import ConfigError

T = TypeVar("T")

MIXES: tuple[str, ...] = ("uniform", "pool", "release")

# release/DataStats.txt: target node types of the positive Delete/Invert files, in percent.
RELEASE_TARGET_MIX: dict[str, dict[str, float]] = {
    "surface": {"ChemicalSubstance": 8.8, "GeneFamily": 27.2, "Protein": 64.0},
    "deep": {"ChemicalSubstance": 21.2, "GeneFamily": 37.2, "Protein": 41.6},
}


def allocate(n: int, weights: Mapping[str, float]) -> dict[str, int]:
    """Split `n` over the keys of `weights` by the largest-remainder method (ties: key order).

    >>> allocate(10, {"a": 1, "b": 1, "c": 1})
    {'a': 4, 'b': 3, 'c': 3}
    """
    total = sum(weights.values())
    if total <= 0:
        raise ConfigError("sampling weights must have a positive sum", key="mix")
    exact = {k: n * w / total for k, w in weights.items()}
    counts = {k: math.floor(v) for k, v in exact.items()}
    by_remainder = sorted(exact, key=lambda k: (-(exact[k] - counts[k]), list(weights).index(k)))
    for k in by_remainder[: n - sum(counts.values())]:
        counts[k] += 1
    return counts


def stratified_sample(
    items: Sequence[T], n: int, rng: random.Random, stratum: Callable[[T], str], weights: Mapping[str, float]
) -> list[T]:
    """`n` items, ``allocate(n, weights)[s]`` from each stratum ``s`` (uniform within it), then shuffled.

    Raises:
        ConfigError: a stratum has fewer items than it is allocated.
    """
    groups: dict[str, list[T]] = {}
    for item in items:
        groups.setdefault(stratum(item), []).append(item)
    chosen: list[T] = []
    for key, count in allocate(n, weights).items():
        group = groups.get(key, [])
        if count > len(group):
            raise ConfigError(f"stratum {key!r} has {len(group)} candidates, {count} requested", key="mix")
        chosen.extend(rng.sample(group, count))
    rng.shuffle(chosen)
    return chosen


def sample_links(items: Sequence[T], n: int, rng: random.Random, *, mix: str, depth: str,
                 stratum: Callable[[T], str]) -> list[T]:
    """Draw `n` of `items` under `mix` (``uniform``, ``pool`` or ``release``; see the module docstring)."""
    if mix == "uniform":
        return rng.sample(list(items), n)
    if mix == "pool":
        counts: dict[str, float] = {}
        for item in items:
            counts[stratum(item)] = counts.get(stratum(item), 0) + 1
        return stratified_sample(items, n, rng, stratum, dict(sorted(counts.items())))
    if mix == "release":
        return stratified_sample(items, n, rng, stratum, RELEASE_TARGET_MIX[depth])
    raise ConfigError(f"unknown mix {mix!r}; choose one of {', '.join(MIXES)}", key="mix")
