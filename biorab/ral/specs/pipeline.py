"""`Pipeline`: the RAL's stages in their one order.

    retrieve ─▶ render ─▶ generate ─▶ probe ─▶ parse

`STAGES` is the only place this order is written. Every way of answering runs a `Pipeline`: `RAL.answer`
(one request, on records), and on rows, built by `biorab.ral.row_stages.row_pipeline.RowPipeline`, the
in-process
executor (`biorab.runner.executors.local`), the driver's cache-only pass
(`biorab.ral.row_stages.cached_rows`) and
the Ray executor (`pipelines/`), which places segments of the same pipeline on its actors (the retrieval
segment in the retrieval actor pool, the answer segment in the LLM actor pool) and never composes stages
itself. The awareness probe reads the instance and its retrieved example only, never the task output, so
it runs right after the task generation, on the same generator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Generic, TypeVar

#: The stages of a retrieval-augmented answer, in order.
STAGES: tuple[str, ...] = ("retrieve", "render", "generate", "probe", "parse")

T = TypeVar("T")


class Pipeline(Generic[T]):
    """Named stages (callables ``T -> T``) run in `STAGES` order; a stage left out is skipped.

    The caller names what each stage does; the pipeline alone decides in which order they run."""

    def __init__(self, stages: Mapping[str, Callable[[T], T]]) -> None:
        unknown = sorted(set(stages) - set(STAGES))
        if unknown:
            raise ValueError(f"unknown pipeline stage(s) {unknown}; the stages are {list(STAGES)}")
        self.stages: tuple[tuple[str, Callable[[T], T]], ...] = tuple(
            (name, stages[name]) for name in STAGES if name in stages)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.stages)

    def __call__(self, batch: T) -> T:
        for _, stage in self.stages:
            batch = stage(batch)
        return batch

    def split(self, after: str) -> tuple[Pipeline[T], Pipeline[T]]:
        """(the stages up to and including `after`, the stages behind it)."""
        cut = STAGES.index(after) + 1
        head = {n: s for n, s in self.stages if STAGES.index(n) < cut}
        return Pipeline(head), Pipeline({n: s for n, s in self.stages if n not in head})


def segment(first: str = STAGES[0], last: str = STAGES[-1]) -> tuple[str, ...]:
    """The stage names from `first` to `last`, in order."""
    names = STAGES[STAGES.index(first) : STAGES.index(last) + 1]
    if not names:
        raise ValueError(f"empty pipeline segment {first!r}..{last!r}")
    return names
