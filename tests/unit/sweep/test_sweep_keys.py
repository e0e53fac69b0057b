"""Bulk generation and hits keys equal the runner's `generation_key` and `hits_key`; Holm's correction on
pinned values."""

from __future__ import annotations

import pytest

from biorab.caches import generation_key, hits_key
from biorab.common.records import OutputConstraint, Prompt
from biorab.generation.base import SamplingParams
from biorab.sweep.keys import generation_keys, hits_keys
from biorab.sweep.significance import holm


def test_bulk_keys_equal_generation_key() -> None:
    prompts = [
        Prompt(example_id="a", text="Ünïcode \"quoted\"\nline", stop=("\n\n",)),
        Prompt(example_id="b", text="plain", stop=(), constraint=OutputConstraint(choices=("yes", "no"))),
        Prompt(example_id="c", text="regex", stop=("###", "\n"), constraint=OutputConstraint(regex="[A-D]")),
    ]
    params = SamplingParams(max_tokens=9, stop=("</s>", "\n"), seed=3)
    assert generation_keys("digest-1", prompts, params) == [generation_key("digest-1", p, params)
                                                            for p in prompts]


def test_bulk_keys_group_equal_constraints_built_apart() -> None:
    # equal constraints that are distinct objects (each render builds its own) share one key layout
    params = SamplingParams(max_tokens=4)
    prompts = [Prompt(example_id=str(i), text=f"q{i}", constraint=OutputConstraint(choices=("a", "b")))
               for i in range(3)] + [Prompt(example_id="n", text="q0")]
    assert generation_keys("d", prompts, params) == [generation_key("d", p, params) for p in prompts]
    assert generation_keys("d", prompts, params)[0] != generation_keys("d", prompts, params)[3]


@pytest.mark.parametrize(("keep_ties", "dedupe"), [(True, True), (False, False), (True, False)])
def test_bulk_hits_keys_equal_hits_key(keep_ties: bool, dedupe: bool) -> None:
    queries = ["plain", "Ünïcode \"quoted\"\nline \\ back", "", "\u0000 nul and 🧬"]
    fields = {"retriever": "bm25-fp", "corpus": "c0ffee", "k": 3, "keep_ties": keep_ties, "tie_pool": 8,
              "dedupe": dedupe}
    assert hits_keys(queries, **fields) == [hits_key(query=q, **fields) for q in queries]  # type: ignore[arg-type]


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5, 0.001]) == [0.5, 0.002]
    assert holm([]) == []
