"""Seeded stratified sampling of Delete/Invert positives (biorab.drugmech.generate.sampling)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from biorab.common.errors import ConfigError
from biorab.drugmech.generate.sampling import allocate, sample_links, stratified_sample


def test_allocate_largest_remainder() -> None:
    assert allocate(10, {"a": 1, "b": 1, "c": 1}) == {"a": 4, "b": 3, "c": 3}
    # 250 * (8.8, 27.2, 64.0)% = 22, 68, 160 exactly: the release's surface targets
    assert allocate(250, {"ChemicalSubstance": 8.8, "GeneFamily": 27.2, "Protein": 64.0}) == {
        "ChemicalSubstance": 22, "GeneFamily": 68, "Protein": 160}
    assert allocate(7, {"x": 0.5, "y": 0.3, "z": 0.2}) == {"x": 4, "y": 2, "z": 1}  # 3.5, 2.1, 1.4
    with pytest.raises(ConfigError, match="positive sum"):
        allocate(3, {"x": 0})


ITEMS = [f"A{i}" for i in range(30)] + [f"B{i}" for i in range(10)]


def test_stratified_sample_counts_and_seed() -> None:
    got = stratified_sample(ITEMS, 10, random.Random(1), lambda s: s[0], {"A": 1, "B": 1})
    assert Counter(s[0] for s in got) == {"A": 5, "B": 5} and len(set(got)) == 10
    assert got == stratified_sample(ITEMS, 10, random.Random(1), lambda s: s[0], {"A": 1, "B": 1})
    with pytest.raises(ConfigError, match="stratum 'B' has 10 candidates, 20 requested"):
        stratified_sample(ITEMS, 40, random.Random(1), lambda s: s[0], {"A": 1, "B": 1})


def test_sample_links_mixes() -> None:
    pool_mix = sample_links(ITEMS, 8, random.Random(0), mix="pool", depth="deep", stratum=lambda s: s[0])
    assert Counter(s[0] for s in pool_mix) == {"A": 6, "B": 2}  # 30:10 of 8
    uniform = sample_links(ITEMS, 8, random.Random(0), mix="uniform", depth="deep", stratum=lambda s: s[0])
    assert uniform == random.Random(0).sample(ITEMS, 8)
    with pytest.raises(ConfigError, match="unknown mix 'even'"):
        sample_links(ITEMS, 8, random.Random(0), mix="even", depth="deep", stratum=lambda s: s[0])
