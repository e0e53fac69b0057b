"""The render, generate and parse stages, as callables on a batch of rows.

These are the very functions the Ray pipeline wraps (render/parse as tasks, `GenerationStage` as an actor),
so an in-process run and a distributed run cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore
from biorab.cells import CellPlan
from biorab.generation.base import SamplingParams
from biorab.ral import CachedGenerator, parse_generation, render_prompt
from biorab.ral.rows import (
    row_example,
    row_generation,
    row_hits,
    row_prompt,
    set_generation,
    set_prediction,
    set_prompt,
)


class RenderStage:
    """Fills ``prompt``, ``stop`` and ``constraint`` with `biorab.tasks.render` (templates loaded once)."""

    def __init__(self, plans: Mapping[str, CellPlan]) -> None:
        self.plans = dict(plans)
        self._templates: dict[tuple[str, str], Any] = {}

    def _template(self, plan: CellPlan) -> Any:
        dataset, retrieval = plan.dataset_setting()
        key = (dataset, retrieval.template)
        if key not in self._templates:
            from biorab.tasks import get_template

            self._templates[key] = get_template(dataset, variant=retrieval.template, task=plan.task)
        return self._templates[key]

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            plan = self.plans[row["cell_id"]]
            if not plan.renders:  # the experiment source rendered it when planning
                continue
            prompt = render_prompt(self._template(plan), row_example(row), row_hits(row))
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
        self._generator: CachedGenerator | None = None

    @property
    def backend(self) -> Any:
        """The backend; where its digest is known without loading it, a `DeferredBackend` that loads
        the model on the first cache miss only (a fully cached batch starts no engine)."""
        if self._backend is None:
            from biorab.generation import build_backend
            from biorab.runner.execution.deferred_backend import DeferredBackend, planned_digest

            def build() -> Any:
                return build_backend(self.backend_name, self.backend_params)

            digest = planned_digest(self.backend_name, self.backend_params)
            self._backend = build() if digest is None else DeferredBackend(build, digest)
        return self._backend

    @property
    def engine_started(self) -> bool:
        """Whether a model was loaded (False while every generation came from the cache)."""
        return self._backend is not None and getattr(self._backend, "built", True)

    @property
    def generator(self) -> CachedGenerator:
        """The backend behind the generation cache (built on first use)."""
        if self._generator is None:
            self._generator = CachedGenerator(self.backend, self.store, name=self.backend_name)
        return self._generator

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        groups: dict[int | None, list[dict[str, Any]]] = {}
        for row in rows:
            groups.setdefault(self.seeds.get(row["cell_id"]), []).append(row)
        for seed, group in groups.items():
            params = self.sampling if seed is None else self.sampling.model_copy(update={"seed": seed})
            results = self.generator.generate([row_prompt(row) for row in group], params)
            for row, res in zip(group, results, strict=True):
                set_generation(row, res.generation, key=res.key, cached=res.cached)
        return rows

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()


class ParseStage:
    """Fills ``pred_*`` with `biorab.parsing.parse`; a failed generation is a failed prediction."""

    def __init__(self, plans: Mapping[str, CellPlan]) -> None:
        self.plans = dict(plans)

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for row in rows:
            plan = self.plans[row["cell_id"]]
            if not plan.parses:  # the experiment source scores these rows from disk
                continue
            pred = parse_generation(plan.task, row_generation(row), mode=plan.parser, labels=plan.labels)
            set_prediction(row, pred)
        return rows
