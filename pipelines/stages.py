"""Ray Data wrappers of segments of the run's pipeline (`biorab.ral.specs.pipeline.RowPipeline`): Arrow batch
in,
Arrow batch out, and nothing else. Each wrapper builds its segment from the pipeline's recipe where it
runs; none of them composes stages.

Actor classes (`RetrievalActor`, `GenerationActor`) build their index or model once in ``__init__``/on
first use; the task functions (`segment_batch`, `write_batch`) are stateless and serve the
``vllm_processor`` engine, whose LLM stage is Ray's own processor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from biorab.generation.deferred import DeferredBackend
from biorab.ral import RowPipeline
from biorab.ral.specs.rows import from_table, to_table

# What the write stage hands back to the driver: enough to count progress, cache hits and failures.
RECEIPT_COLUMNS = ("cell_id", "id", "gen_error", "gen_cached", "retrieval_cached", "probe_gen_error",
                   "probe_gen_cached")

Rows = list[dict[str, Any]]


class RetrievalActor:
    """One retrieval actor: the pipeline's retrieval segment, each cell's corpus and index built once."""

    def __init__(self, pipeline: RowPipeline) -> None:
        self.stage = pipeline.build(last="retrieve")

    def __call__(self, batch: pa.Table) -> pa.Table:
        return to_table(self.stage(from_table(batch)))


class GenerationActor:
    """One LLM actor: loads the configured backend once (where the model's digest is known without it, on
    the first cache miss: `biorab.generation.deferred.run_backend`), then runs the pipeline's answer
    segment (render → generate → awareness probe of probing cells → parse) through the cache, writes the
    batch (`write`, the runner's, passed in) and returns the receipt columns only.

    Rendering, parsing and writing here rather than in tasks around the actor: on a 2-CPU local Ray the
    prestarted workers become the actors, so the first render task waited for a new worker process
    (~1 s of imports on the critical path, ~2.5 CPU s), and every batch took two more object-store hops
    (docs/pipeline.md, issue 20 round 6). The probe runs on the same loaded model (no second model copy).

    `preload`: the driver knows a row will miss the cache (`biorab.ral.row_stages.cached_rows.known_miss`),
    so a
    deferred model starts loading in a thread as the actor starts, while the first batch is still
    upstream."""

    def __init__(self, pipeline: RowPipeline, write: Callable[[Rows], object], preload: bool = False) -> None:
        generator = pipeline.generator()
        self.backend = generator.backend
        if preload and isinstance(self.backend, DeferredBackend):
            self.backend.load_in_background()
        self.answer = pipeline.build(generator, first="render")
        self.write = write

    def __call__(self, batch: pa.Table) -> pa.Table:
        if isinstance(self.backend, DeferredBackend):
            # imports stay in one thread at a time: the load imports torch and transformers
            self.backend.wait_loaded()
        return receipts(self.answer(from_table(batch)), self.write)


def segment_batch(batch: pa.Table, pipeline: RowPipeline, first: str, last: str) -> pa.Table:
    """The pipeline's stages `first`..`last` (that do not generate) on one batch, as a task."""
    return to_table(pipeline.build(first=first, last=last)(from_table(batch)))


def write_batch(batch: pa.Table, write: Callable[[Rows], object]) -> pa.Table:
    """Write the batch (append-only shard files); return the receipt columns only."""
    return receipts(from_table(batch), write)


def receipts(rows: Rows, write: Callable[[Rows], object]) -> pa.Table:
    """`write` the rows, then hand back their `RECEIPT_COLUMNS`: what a pipeline hands the driver."""
    write(rows)
    return to_table(rows).select(list(RECEIPT_COLUMNS))
