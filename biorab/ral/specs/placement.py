"""Where each stage of the row pipeline runs on Ray, as data (as Ray Data LLM's processor lists its stages).

Each stage declares, per LLM engine (``resources.llm_engine``), how it is placed: as stateless tasks, on an
actor pool sized by one entry of the run's ``resources:`` (``retrieval`` or ``llm``), or as the LLM engine's
own stage (Ray's ``ray.data.llm`` processor). `segments` cuts a run of stages into the consecutive groups
that share a placement; the Ray executor (`pipelines.ray_executor`) maps those segments in one loop and
names no stage.

    actors:          retrieve [actors: retrieval] → render, generate, probe, parse [actors: llm]
    vllm_processor:  retrieve [actors: retrieval] → render [tasks] → generate, probe [engine: llm]
                     → parse [tasks]

With the ``actors`` engine, render and parse run in the LLM actor beside generation: on a 2-CPU local Ray a
separate render task waited ~1 s for a worker process, and every batch took two more object-store hops
(docs/pipeline.md, issue 20 round 6). With ``vllm_processor`` the engine is Ray's own stage, so the stages
around it run as tasks. The engine runs the task generation only: a probing cell, which the probe stage
would need the engine for, is refused before any work (`biorab.generation.capabilities.check_engine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from biorab.ral.specs.pipeline import STAGES

#: How a stage is placed: Ray tasks (``resources.task_num_cpus`` each), an actor pool, or the LLM engine's
#: own stage.
Kind = Literal["tasks", "actors", "engine"]
#: The ``resources:`` entry that sizes an actor pool or the engine (pool size, CPUs, GPUs, batch size).
Pool = Literal["retrieval", "llm"]


@dataclass(frozen=True)
class Placement:
    """How one stage runs: `kind`, and for actors and the engine the ``resources:`` entry (`pool`)."""

    kind: Kind
    pool: Pool | None = None

    def __post_init__(self) -> None:
        if (self.kind == "tasks") != (self.pool is None):
            need = "takes no" if self.kind == "tasks" else "needs a"
            raise ValueError(f"a {self.kind} placement {need} pool")


TASKS = Placement("tasks")
RETRIEVAL_ACTORS = Placement("actors", "retrieval")
LLM_ACTORS = Placement("actors", "llm")
LLM_ENGINE = Placement("engine", "llm")

#: llm_engine → stage → placement; every engine places every stage of `STAGES`.
PLACEMENTS: dict[str, dict[str, Placement]] = {
    "actors": {"retrieve": RETRIEVAL_ACTORS, "render": LLM_ACTORS, "generate": LLM_ACTORS,
               "probe": LLM_ACTORS, "parse": LLM_ACTORS},
    "vllm_processor": {"retrieve": RETRIEVAL_ACTORS, "render": TASKS, "generate": LLM_ENGINE,
                       "probe": LLM_ENGINE, "parse": TASKS},
}


@dataclass(frozen=True)
class Segment:
    """Consecutive stages (in `STAGES` order) that share one placement."""

    stages: tuple[str, ...]
    placement: Placement

    @property
    def first(self) -> str:
        return self.stages[0]

    @property
    def last(self) -> str:
        return self.stages[-1]


def segments(stages: Sequence[str], engine: str) -> list[Segment]:
    """`stages` (consecutive, in order) cut into the segments of `engine`'s placements."""
    if engine not in PLACEMENTS:
        raise ValueError(f"unknown llm_engine {engine!r}; known: {', '.join(PLACEMENTS)}")
    placed = PLACEMENTS[engine]
    missing = sorted(set(STAGES) - set(placed))
    if missing:
        raise ValueError(f"llm_engine {engine!r} places no stage {missing}")
    out: list[Segment] = []
    for name in stages:
        where = placed[name]
        if out and out[-1].placement == where:
            out[-1] = Segment((*out[-1].stages, name), where)
        else:
            out.append(Segment((name,), where))
    return out
