"""Ray Data wrappers of segments of the run's pipeline (`biorab.ral.RowPipeline`, placed by
`biorab.ral.specs.placement`): Arrow batch in, Arrow batch out, and nothing else. Each wrapper builds its
segment from the pipeline's recipe where it runs; none of them composes stages or names one.

`SegmentActor` (an actor pool: `RetrievalActor` on ``resources.retrieval``, `GenerationActor` on
``resources.llm``; two names so that Ray's process titles say which pool a worker serves) builds its
segment, and its model when the segment generates, once; `segment_batch` is the stateless task.
The last segment of a pipeline also writes its batches (`write`, the runner's) and hands back receipts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from biorab.generation.deferred import DeferredBackend
from biorab.ral import RowPipeline
from biorab.ral.specs.placement import Segment
from biorab.ral.specs.rows import from_table, to_table

# What the write stage hands back to the driver: enough to count progress, cache hits and failures.
RECEIPT_COLUMNS = ("cell_id", "id", "gen_error", "gen_cached", "retrieval_cached", "probe_gen_error",
                   "probe_gen_cached")

Rows = list[dict[str, Any]]
Write = Callable[[Rows], object]


class SegmentActor:
    """One actor of a pool: the pipeline's `segment`, built once (with it, the configured backend where the
    segment generates: loaded where the model's digest is known without it on the first cache miss,
    `biorab.generation.deferred.run_backend`; the probe asks the same loaded model).

    `write`: this is the pipeline's last segment: write each batch and return its receipt columns only.
    `preload`: the driver knows a row will miss the cache (`biorab.ral.row_stages.cached_rows.known_miss`),
    so a deferred model starts loading in a thread as the actor starts, while the first batch is still
    on its way.
    """

    def __init__(self, pipeline: RowPipeline, segment: Segment, write: Write | None = None,
                 preload: bool = False) -> None:
        self.backend: Any = None
        generator = None
        if pipeline.asks_model(segment.first, segment.last):
            generator = pipeline.generator()
            self.backend = generator.backend
            if preload and isinstance(self.backend, DeferredBackend):
                self.backend.load_in_background()
        self.segment = pipeline.build(generator, first=segment.first, last=segment.last)
        self.write = write

    def __call__(self, batch: pa.Table) -> pa.Table:
        if isinstance(self.backend, DeferredBackend):
            # imports stay in one thread at a time: the load imports torch and transformers
            self.backend.wait_loaded()
        rows = self.segment(from_table(batch))
        return to_table(rows) if self.write is None else receipts(rows, self.write)


class RetrievalActor(SegmentActor):
    """A `SegmentActor` of the ``resources.retrieval`` pool (each cell's corpus and index built once)."""


class GenerationActor(SegmentActor):
    """A `SegmentActor` of the ``resources.llm`` pool (the model loaded once).

    The segment it runs is the placement's (on the ``actors`` engine: render → generate → probe → parse):
    rendering and parsing in the actor, not in tasks around it, because on a 2-CPU local Ray the first
    render task waited for a new worker process (~1 s of imports on the critical path, ~2.5 CPU s), and
    every batch took two more object-store hops (docs/pipeline.md, issue 20 round 6)."""


#: The actor class of each ``resources:`` pool a placement names.
ACTORS: dict[str, type[SegmentActor]] = {"retrieval": RetrievalActor, "llm": GenerationActor}


def segment_batch(batch: pa.Table, pipeline: RowPipeline, segment: Segment, write: Write | None = None
                  ) -> pa.Table:
    """The pipeline's `segment` (one that does not generate) on one batch, as a task; with `write`, the
    batch is written and its receipts returned."""
    rows = pipeline.build(first=segment.first, last=segment.last)(from_table(batch))
    return to_table(rows) if write is None else receipts(rows, write)


def write_batch(batch: pa.Table, write: Write) -> pa.Table:
    """Write the batch (append-only shard files); return the receipt columns only."""
    return receipts(from_table(batch), write)


def receipts(rows: Rows, write: Write) -> pa.Table:
    """`write` the rows, then hand back their `RECEIPT_COLUMNS`: what a pipeline hands the driver."""
    write(rows)
    return to_table(rows).select(list(RECEIPT_COLUMNS))
