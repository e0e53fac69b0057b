"""`Pipeline`: stages always run in `STAGES` order; `RowPipeline.build` makes the segments the executors
place (the Ray retrieval actor's, the LLM actor's, the processor path's tasks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.ral.parts.generator import CachedGenerator
from biorab.ral.row_stages.row_pipeline import RowPipeline
from biorab.ral.specs.pipeline import STAGES, Pipeline, segment


def tracer(name: str):  # noqa: ANN201
    def stage(seen: list[str]) -> list[str]:
        return [*seen, name]

    return stage


def test_stages_run_in_the_one_order_whatever_order_they_are_given() -> None:
    assert STAGES == ("retrieve", "render", "generate", "probe", "parse")
    given = {name: tracer(name) for name in reversed(STAGES)}
    assert Pipeline(given)([]) == list(STAGES)
    assert Pipeline({"parse": tracer("parse"), "render": tracer("render")})([]) == ["render", "parse"]


def test_split_and_segments() -> None:
    pipeline = Pipeline({name: tracer(name) for name in STAGES})
    head, tail = pipeline.split(after="retrieve")
    assert head.names == ("retrieve",) and tail.names == ("render", "generate", "probe", "parse")
    assert tail(head([])) == pipeline([])
    assert segment(first="render") == ("render", "generate", "probe", "parse")
    assert segment(last="retrieve") == ("retrieve",)
    with pytest.raises(ValueError, match="empty pipeline segment"):
        segment(first="parse", last="render")
    with pytest.raises(ValueError, match=r"unknown pipeline stage\(s\) \['write'\]"):
        Pipeline({"write": tracer("write")})


def recipe(tmp_path: Path) -> RowPipeline:
    return RowPipeline({}, {}, tmp_path / "hits.sqlite", tmp_path / "gens.sqlite", "fake", {},
                       SamplingParams(max_tokens=4))


def test_row_pipeline_builds_each_segment_and_wants_a_generator_to_generate(tmp_path: Path) -> None:
    rows = recipe(tmp_path)
    assert rows.build(last="retrieve").names == ("retrieve",)
    assert rows.build(first="render", last="render").names == ("render",)
    assert rows.build(first="parse").names == ("parse",)
    generator = CachedGenerator(FakeBackend())
    answer = rows.build(generator, first="render")
    assert answer.names == ("render", "generate", "probe", "parse")
    stages: dict[str, Any] = dict(answer.stages)
    generate, probe = stages["generate"], stages["probe"]
    assert probe.generate is generate and generate.generator is generator  # the probe asks the same model
    with pytest.raises(ValueError, match="render..probe generates: it needs a generator"):
        rows.build(first="render", last="probe")
