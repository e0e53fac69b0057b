"""Bulk generation keys equal the runner's `generation_key`; Holm's correction on pinned values."""

from __future__ import annotations

from biorab.caches import generation_key
from biorab.generation.base import SamplingParams
from biorab.records import OutputConstraint, Prompt
from biorab.sweep.keys import generation_keys
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


def test_holm() -> None:
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5, 0.001]) == [0.5, 0.002]
    assert holm([]) == []
