"""The render, generate and parse stages: the steps of `biorab.ral.parts.steps` on a batch of rows.

`biorab.ral.row_stages.row_pipeline.RowPipeline.build` puts them, in the one stage order, into the pipeline
that every
executor runs (in-process, or in segments on the Ray actors, `pipelines/stages.py`), so an in-process run
and a distributed run cannot disagree; `RAL.answer` calls the same steps for one request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.generation.base import SamplingParams
from biorab.ral.parts.assembly import RALParts
from biorab.ral.parts.generator import CachedGenerator
from biorab.ral.parts.steps import generate, parse_generation, render_prompt
from biorab.ral.specs.rows import (
    row_example,
    row_generation,
    row_hits,
    row_prompt,
    set_generation,
    set_prediction,
    set_prompt,
)
from biorab.ral.specs.stage_plan import StagePlan


class RenderStage:
    """Fills ``prompt``, ``stop`` and ``constraint`` with `biorab.tasks.render`, each cell's template from its
    parts (`biorab.ral.parts.assembly.assemble_cells`: built on first use, once per process)."""

    def __init__(self, plans: Mapping[str, StagePlan], parts: Mapping[str, RALParts]) -> None:
        self.plans = dict(plans)
        self.parts = dict(parts)

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            plan = self.plans[row["cell_id"]]
            if not plan.renders:  # the experiment source rendered it when planning
                continue
            prompt = render_prompt(self.parts[row["cell_id"]].template, row_example(row), row_hits(row))
            set_prompt(row, prompt)
        return rows


class GenerationStage:
    """Fills the ``gen_*`` columns: cached generations from the store, the rest from the backend.

    Identical prompts in a batch are generated once. A backend error fails only the rows it concerns:
    they get ``gen_error`` and are not cached, so the next run retries them. `seeds` maps a cell id to the
    sampling seed of its rows (DrugMech run ``r`` samples with ``seed + r``); other cells use `sampling`.
    The caller owns `generator` (and closes its backend).
    """

    def __init__(self, generator: CachedGenerator, sampling: SamplingParams, *,
                 seeds: Mapping[str, int] | None = None) -> None:
        self.generator = generator
        self.sampling = sampling
        self.seeds = dict(seeds or {})

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        groups: dict[int | None, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(self.seeds.get(row["cell_id"]), []).append(row)
        for seed, group in groups.items():
            params = self.sampling if seed is None else self.sampling.model_copy(update={"seed": seed})
            results = generate(self.generator, [row_prompt(row) for row in group], params)
            for row, res in zip(group, results, strict=True):
                set_generation(row, res.generation, key=res.key, cached=res.cached)
        return rows


class ParseStage:
    """Fills ``pred_*`` with the task's parser (`biorab.tasks.parse`); a failed generation is a failed
    prediction."""

    def __init__(self, plans: Mapping[str, StagePlan]) -> None:
        self.plans = dict(plans)

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            plan = self.plans[row["cell_id"]]
            if not plan.parses:  # the experiment source scores these rows from disk
                continue
            pred = parse_generation(plan.task, row_generation(row), mode=plan.parser, labels=plan.labels)
            set_prediction(row, pred)
        return rows
