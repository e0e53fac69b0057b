"""The render, generate and parse stages, as callables on a batch of rows.

These are the very functions the Ray pipeline wraps (render/parse as tasks, `GenerationStage` as an actor),
so an in-process run and a distributed run cannot disagree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biorab.errors import BackendError
from biorab.generation.base import SamplingParams
from biorab.records import Generation, Prediction, Prompt
from biorab.runner.plan import CellPlan
from biorab.runner.rows import (
    row_example,
    row_generation,
    row_hits,
    row_prompt,
    set_generation,
    set_prediction,
    set_prompt,
)
from biorab.runner.stores import GenerationStore, generation_key


class RenderStage:
    """Fills ``prompt``, ``stop`` and ``constraint`` with `biorab.tasks.render` (templates loaded once)."""

    def __init__(self, plans: Mapping[str, CellPlan]) -> None:
        self.plans = dict(plans)
        self._templates: dict[tuple[str, str], Any] = {}

    def _template(self, plan: CellPlan) -> Any:
        key = (plan.dataset, plan.retrieval.template)
        if key not in self._templates:
            from biorab.tasks import get_template

            self._templates[key] = get_template(plan.dataset, variant=plan.retrieval.template, task=plan.task)
        return self._templates[key]

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from biorab.tasks import render

        for row in rows:
            plan = self.plans[row["cell_id"]]
            if plan.is_drugmech:  # rendered when planned (biorab.drugmech.prompts)
                continue
            prompt = render(self._template(plan), row_example(row), row_hits(row))
            set_prompt(row, prompt)
        return rows


class GenerationStage:
    """Fills the ``gen_*`` columns: cached generations from the store, the rest from the backend.

    Identical prompts in a batch are generated once. A backend error fails only the rows it concerns:
    they get ``gen_error`` and are not cached, so the next run retries them. `seeds` maps a cell id to the
    sampling seed of its rows (DrugMech run ``r`` samples with ``seed + r``); other cells use `sampling`.
    """

    def __init__(
        self,
        backend: str,
        backend_params: Mapping[str, Any] | None,
        sampling: SamplingParams,
        generations_store: str | Path,
        *,
        backend_obj: Any = None,
        seeds: Mapping[str, int] | None = None,
    ) -> None:
        self.backend_name, self.backend_params = backend, dict(backend_params or {})
        self.sampling = sampling
        self.seeds = dict(seeds or {})
        self.store = GenerationStore(generations_store)
        self._backend = backend_obj

    @property
    def backend(self) -> Any:
        if self._backend is None:
            from biorab.generation import build_backend

            self._backend = build_backend(self.backend_name, self.backend_params)
        return self._backend

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        groups: dict[int | None, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(self.seeds.get(row["cell_id"]), []).append(row)
        for seed, group in groups.items():
            params = self.sampling if seed is None else self.sampling.model_copy(update={"seed": seed})
            results = self.generate_prompts([row_prompt(row) for row in group], params)
            for row, (gen, key, hit) in zip(group, results, strict=True):
                set_generation(row, gen, key=key, cached=hit)
        return rows

    def generate_prompts(
        self, prompts: Sequence[Prompt], sampling: SamplingParams | None = None
    ) -> list[tuple[Generation, str, bool]]:
        """(generation, cache key, from the store?) per prompt, with `sampling` (default: the stage's).

        Also used by the awareness probe, so the probe shares the loaded model, the store and the keys.
        """
        params = sampling or self.sampling
        digest = self.backend.model_digest
        keys = [generation_key(digest, p, params) for p in prompts]
        cached = self.store.get_many(keys)
        todo = {k: p for k, p in zip(keys, prompts, strict=True) if k not in cached}
        fresh = self._generate(list(todo.values()), list(todo), params)
        self.store.put_many(fresh)
        return [(cached[k], k, True) if k in cached else (fresh[k], k, False) for k in keys]

    def _generate(
        self, prompts: Sequence[Prompt], keys: Sequence[str], sampling: SamplingParams
    ) -> dict[str, Generation]:
        if not prompts:
            return {}
        try:
            gens = self.backend.generate(prompts, sampling)
        except BackendError as e:  # the whole call failed after the backend's own retries
            gens = [Generation(text="", error=f"{type(e).__name__}: {e}") for _ in prompts]
        if len(gens) != len(prompts):
            raise BackendError(f"backend {self.backend_name!r} returned {len(gens)} generations "
                               f"for {len(prompts)} prompts")
        return dict(zip(keys, gens, strict=True))

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()


class ParseStage:
    """Fills ``pred_*`` with `biorab.parsing.parse`; a failed generation is a failed prediction."""

    def __init__(self, plans: Mapping[str, CellPlan]) -> None:
        self.plans = dict(plans)

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from biorab.parsing import parse

        for row in rows:
            plan = self.plans[row["cell_id"]]
            if plan.is_drugmech:  # scored from the rows on disk by biorab.drugmech (drugmech_scoring)
                continue
            gen = row_generation(row)
            if gen.error is not None:
                pred = Prediction(label=None, raw="", ok=False)
            else:
                pred = parse(plan.task, gen.text, mode=plan.parser, labels=plan.labels)
                if pred.scores is None and gen.label_logprobs:
                    pred = dataclasses.replace(pred, scores=dict(gen.label_logprobs))
            set_prediction(row, pred)
        return rows
