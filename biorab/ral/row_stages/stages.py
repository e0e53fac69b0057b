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
        for params, group in self._groups(rows):
            results = generate(self.generator, [row_prompt(row) for row in group], params)
            for row, res in zip(group, results, strict=True):
                set_generation(row, res.generation, key=res.key, cached=res.cached)
        return rows

    def lookup(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The first half of the stage, for an engine that generates outside the pipeline (Ray's processor):
        fills ``gen_*`` of the rows whose generation is cached (``gen_cached``), and only ``gen_key`` of the
        others, which the engine then generates."""
        for params, group in self._groups(rows):
            keys, cached = self.generator.lookup([row_prompt(row) for row in group], params)
            for row, key in zip(group, keys, strict=True):
                if key in cached:
                    set_generation(row, cached[key], key=key, cached=True)
                else:
                    row["gen_key"] = key
        return rows

    def store(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The second half: stores the fresh generations (``gen_cached`` false) the engine put in `rows`
        under their ``gen_key`` (errored ones are not stored: the next run retries them)."""
        fresh = {row["gen_key"]: row_generation(row) for row in rows if not row["gen_cached"]}
        self.generator.store_fresh(fresh)
        return rows

    def _groups(self, rows: list[dict[str, Any]]) -> list[tuple[SamplingParams, list[dict[str, Any]]]]:
        """The rows by sampling params: a cell's own seed where `seeds` has one."""
        groups: dict[int | None, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(self.seeds.get(row["cell_id"]), []).append(row)
        return [(self.sampling if seed is None else self.sampling.model_copy(update={"seed": seed}), group)
                for seed, group in groups.items()]


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
