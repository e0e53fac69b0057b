"""`RowPipeline`: what a run's pipeline on rows is made of, as data, and the stages it builds from it.

The recipe travels (to a Ray actor, to the driver's cache-only pass) as plain data; each place that runs
the pipeline, or a segment of it, builds the stages there with `RowPipeline.build`, in the one order of
`biorab.ral.specs.pipeline.STAGES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.generation.base import SamplingParams
from biorab.ral.parts.assembly import RALParts
from biorab.ral.parts.generator import CachedGenerator, run_generator
from biorab.ral.row_stages.probe_stage import ProbeStage
from biorab.ral.row_stages.retrieval_stage import RetrievalStage
from biorab.ral.row_stages.stages import GenerationStage, ParseStage, RenderStage
from biorab.ral.specs.pipeline import STAGES, Pipeline, segment
from biorab.ral.specs.placement import Segment, segments
from biorab.ral.specs.stage_plan import StagePlan

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class RowPipeline:
    """What a run's pipeline on rows is made of, as plain data: cheap to pickle to another process (a Ray
    actor), where `build` makes the stages (and `generator` the model) once.

    Attributes:
        plans: cell id → what the stages read of the cell (`biorab.ral.specs.stage_plan.StagePlan`).
        parts: cell id → its assembled RAL parts (`biorab.ral.assemble_cells`).
        hits_store, generations_store: the content-keyed hit and generation caches (SQLite files).
        backend, backend_params: the registered backend and its params (built by `generator`).
        sampling: the decoding parameters of the task generation.
        seeds: cell id → the sampling seed of its rows, where it differs (DrugMech run r: seed + r).
    """

    plans: Mapping[str, StagePlan]
    parts: Mapping[str, RALParts]
    hits_store: Path
    generations_store: Path
    backend: str
    backend_params: Mapping[str, Any]
    sampling: SamplingParams
    seeds: Mapping[str, int] = field(default_factory=dict)

    def generator(self, backend: Any = None) -> CachedGenerator:
        """The run's generator: `backend` (one already built; ``None``: the configured one, loaded on its
        first cache miss where that pays, `biorab.generation.deferred.run_backend`) behind the generation
        store. The caller closes it."""
        return run_generator(self.backend, self.backend_params, self.generations_store, backend)

    def build(self, generator: CachedGenerator | None = None, *, first: str = STAGES[0],
              last: str = STAGES[-1]) -> Pipeline[Rows]:
        """The stages `first`..`last` on batches of rows; a segment that generates needs `generator`
        (the probe asks the same one as the task generation)."""
        names = segment(first, last)
        generate: GenerationStage | None = None
        if self.asks_model(first, last):
            if generator is None:
                raise ValueError(f"pipeline segment {first}..{last} generates: it needs a generator")
            generate = self.generation_stage(generator)
        makers: dict[str, Callable[[], Callable[[Rows], Rows]]] = {
            "retrieve": lambda: RetrievalStage(self.plans, self.parts, self.hits_store),
            "render": lambda: RenderStage(self.plans, self.parts),
            "generate": lambda: _given(generate),
            "probe": lambda: ProbeStage(self.plans, _given(generate)),
            "parse": lambda: ParseStage(self.plans),
        }
        return Pipeline({name: makers[name]() for name in names})

    @staticmethod
    def asks_model(first: str = STAGES[0], last: str = STAGES[-1]) -> bool:
        """Whether the stages `first`..`last` ask the generator (task generation or probe)."""
        return bool({"generate", "probe"} & set(segment(first, last)))

    def generation_stage(self, generator: CachedGenerator) -> GenerationStage:
        """The generate stage on `generator`: what an LLM engine outside the pipeline (Ray's processor)
        uses for its cache lookup and store, so both key and store generations alike."""
        return GenerationStage(generator, self.sampling, seeds=self.seeds)

    def segments(self, engine: str, *, with_hits: bool = False) -> list[Segment]:
        """The whole pipeline in `engine`'s placed segments (`biorab.ral.specs.placement`); `with_hits`:
        the rows carry their hits already (or no cell retrieves), so it starts at the render stage."""
        first = "render" if with_hits or not self.retrieves() else STAGES[0]
        return segments(segment(first), engine)

    def hit_segments(self, engine: str) -> list[Segment]:
        """The segments before the prompt is known (the retrieval stage): a run that orders its rows by
        prompt prefix runs them as a pass of their own."""
        return segments(segment(last="retrieve"), engine)

    def retrieves(self) -> bool:
        """Whether any cell retrieves (otherwise the retrieval stage only fills empty hits)."""
        return any(p.retrieves for p in self.plans.values())


def _given(stage: GenerationStage | None) -> GenerationStage:
    assert stage is not None  # `build` made it for every segment that generates
    return stage
