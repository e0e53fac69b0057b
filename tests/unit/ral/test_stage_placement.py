"""Stages carry their placement as data (`biorab.ral.specs.placement`): the segments each LLM engine cuts
the pipeline into, and the Ray layer names no stage (issue 42 item 1)."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace
from typing import cast, get_args

import pytest

from biorab.experiment import LLMEngine
from biorab.generation.base import SamplingParams
from biorab.ral import STAGES, RowPipeline
from biorab.ral.specs.placement import PLACEMENTS, Placement, segments
from biorab.ral.specs.stage_plan import StagePlan

REPO = Path(__file__).resolve().parents[3]


def cut(stages: tuple[str, ...], engine: str) -> list[tuple[tuple[str, ...], str, str | None]]:
    return [(s.stages, s.placement.kind, s.placement.pool) for s in segments(stages, engine)]


def test_actor_engine_segments() -> None:
    # written out by hand: hits in the retrieval pool, the rest of the answer in the LLM pool
    assert cut(STAGES, "actors") == [
        (("retrieve",), "actors", "retrieval"),
        (("render", "generate", "probe", "parse"), "actors", "llm"),
    ]
    assert cut(STAGES[1:], "actors") == [(("render", "generate", "probe", "parse"), "actors", "llm")]


def test_processor_engine_segments() -> None:
    assert cut(STAGES, "vllm_processor") == [
        (("retrieve",), "actors", "retrieval"),
        (("render",), "tasks", None),
        (("generate", "probe"), "engine", "llm"),
        (("parse",), "tasks", None),
    ]


def test_every_engine_places_every_stage_and_unknown_engines_fail() -> None:
    assert set(PLACEMENTS) == set(get_args(LLMEngine))  # every engine a config may name, no other
    assert all(set(placed) == set(STAGES) for placed in PLACEMENTS.values())
    with pytest.raises(ValueError, match="unknown llm_engine 'gpu'"):
        segments(STAGES, "gpu")
    with pytest.raises(ValueError, match="a tasks placement takes no pool"):
        Placement("tasks", "llm")
    with pytest.raises(ValueError, match="an? actors placement needs a pool"):
        Placement("actors")


def pipeline(retrieves: bool) -> RowPipeline:
    plan = cast(StagePlan, SimpleNamespace(retrieves=retrieves))  # `retrieves` is all `segments` reads
    return RowPipeline(plans={"c": plan}, parts={}, hits_store=Path("h"), generations_store=Path("g"),
                       backend="fake", backend_params={}, sampling=SamplingParams())


def test_row_pipeline_segments_start_after_the_hits_when_they_are_known() -> None:
    full = [s.stages for s in pipeline(True).segments("actors")]
    assert full == [("retrieve",), ("render", "generate", "probe", "parse")]
    assert [s.stages for s in pipeline(True).segments("actors", with_hits=True)] == [full[1]]
    # no cell retrieves: the hits segment would only fill empty hits, so it is not placed
    assert [s.stages for s in pipeline(False).segments("actors")] == [full[1]]
    assert [s.stages for s in pipeline(True).hit_segments("vllm_processor")] == [("retrieve",)]
    assert RowPipeline.asks_model("render", "generate") and RowPipeline.asks_model("probe", "probe")
    assert not RowPipeline.asks_model("retrieve", "render") and not RowPipeline.asks_model("parse", "parse")


def stage_names_in(source: str) -> list[tuple[int, str]]:
    """(line, name) of each string literal, name or attribute in `source` that is a stage's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        text = (node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                else node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute)
                else None)
        if text in STAGES:
            found.append((getattr(node, "lineno", 0), str(text)))
    return found


def test_a_planted_stage_name_is_found() -> None:
    source = 'pipeline.build(first="render", last="parse")\nx = plan.retrieve\nrender = 1\ny = "rendered"\n'
    assert sorted(stage_names_in(source)) == [(1, "parse"), (1, "render"), (2, "retrieve"), (3, "render")]


def test_the_ray_layer_writes_no_stage_name() -> None:
    # issue 42 "Done when": no stage name is written in pipelines/ (a string literal naming a stage, or an
    # identifier that is one); the placements and segments come from the pipeline
    files = sorted((REPO / "pipelines").glob("*.py"))
    assert len(files) >= 5  # the walk saw the Ray layer
    found = [f"{p.name}:{line}: {name!r}" for p in files
             for line, name in stage_names_in(p.read_text("utf-8"))]
    assert found == []
