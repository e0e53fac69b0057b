"""The fake engine's regex sampler parses each pattern once (issue 45): its answers are the ones a fresh
parse per answer draws, on the triple task's own constraint and on hand-written patterns."""

from __future__ import annotations

import random
from re import _parser as _p  # type: ignore[attr-defined]

import pytest

from biorab.common.labels import RELATIONS
from biorab.generation.regex_sample import _emit, _parsed, sample_regex
from biorab.tasks import get_task


def _fresh(pattern: str, rng: random.Random) -> str:
    out: list[str] = []
    _emit(_p.parse(pattern), rng, out)  # parsed again for this answer: the sampler before the cache
    return "".join(out)


@pytest.mark.parametrize("pattern", [r"(?:yes|no|maybe)", r"\(([A-E])\)", r"[a-z]{2,5}\|(?:x|y)+\d?"])
def test_cached_draws_equal_fresh_parses(pattern: str) -> None:
    cached = [sample_regex(pattern, random.Random(seed)) for seed in range(50)]
    assert cached == [_fresh(pattern, random.Random(seed)) for seed in range(50)]
    assert _parsed.cache_info().hits >= 49


def test_the_triple_constraint_draws_are_unchanged() -> None:
    task = get_task("triple_extraction")
    constraint = task.constraint(list(RELATIONS["chemprot"]))
    assert constraint is not None and constraint.regex is not None
    pattern = constraint.regex
    cached = [sample_regex(pattern, random.Random(seed)) for seed in range(100)]
    assert cached == [_fresh(pattern, random.Random(seed)) for seed in range(100)]
    assert len(set(cached)) > 50  # the draws vary: the comparison is not between constants
