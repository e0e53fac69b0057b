"""Ray Data wrappers of the RAL's batch stages (`biorab.ral.retrieval_stage`, `answer_stage`, `stages`):
Arrow batch in, Arrow batch out, and nothing else.

Actor classes (`RetrievalActor`, `GenerationActor`) build their index or model once in ``__init__``/on
first use; the task functions (`render_batch`, `parse_batch`, `write_batch`) are stateless and serve the
``vllm_processor`` engine, whose LLM stage is Ray's own processor.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from biorab.cells import CellPlan
from biorab.generation.base import SamplingParams
from biorab.ral.answer_stage import AnswerStage
from biorab.ral.assembly import RALParts
from biorab.ral.retrieval_stage import RetrievalStage
from biorab.ral.rows import from_table, to_table
from biorab.ral.stages import GenerationStage, ParseStage, RenderStage
from biorab.runner.execution.deferred_backend import DeferredBackend, run_backend, run_generator
from biorab.runner.store.shards import write_rows

# What the write stage hands back to the driver: enough to count progress, cache hits and failures.
RECEIPT_COLUMNS = ("cell_id", "id", "gen_error", "gen_cached", "retrieval_cached", "probe_gen_error",
                   "probe_gen_cached")


class RetrievalActor:
    """One retrieval actor: builds each cell's corpus and index once, then serves batches."""

    def __init__(self, plans: Mapping[str, CellPlan], parts: Mapping[str, RALParts], hits_store: str) -> None:
        self.stage = RetrievalStage(plans, parts, hits_store)

    def __call__(self, batch: pa.Table) -> pa.Table:
        return to_table(self.stage(from_table(batch)))


class GenerationActor:
    """One LLM actor: loads the configured backend once (where the model's digest is known without it, on
    the first cache miss: `biorab.runner.execution.deferred_backend.run_backend`), then answers batches
    through the cache (`biorab.ral.answer_stage.AnswerStage`: render, generate, the awareness probe of
    probing cells, parse) and writes them (`write_rows`), returning the receipt columns only.

    Rendering, parsing and writing here rather than in tasks around the actor: on a 2-CPU local Ray the
    prestarted workers become the actors, so the first render task waited for a new worker process
    (~1 s of imports on the critical path, ~2.5 CPU s), and every batch took two more object-store hops
    (docs/pipeline.md, issue 20 round 6). The probe reads the instance and its example only, so it runs
    right after the task generation, on the same loaded model (no second model copy).

    `preload`: the driver knows a row will miss the cache (`cached_rows.known_miss`), so a deferred model
    starts loading in a thread as the actor starts, while the first batch is still upstream."""

    def __init__(self, backend: str, backend_params: dict[str, Any], sampling: dict[str, Any],
                 generations_store: str, plans: Mapping[str, CellPlan], parts: Mapping[str, RALParts],
                 cells_dir: str, attempt: str, seeds: Mapping[str, int] | None = None,
                 preload: bool = False) -> None:
        self.backend = run_backend(backend, backend_params)
        if preload and isinstance(self.backend, DeferredBackend):
            self.backend.load_in_background()
        generator = run_generator(backend, backend_params, generations_store, self.backend)
        self.answer = AnswerStage(plans, parts, GenerationStage(generator, SamplingParams(**sampling),
                                                                 seeds=seeds))
        self.cells_dir = Path(cells_dir)
        self.attempt = attempt

    def __call__(self, batch: pa.Table) -> pa.Table:
        if isinstance(self.backend, DeferredBackend):
            # imports stay in one thread at a time: the load imports torch and transformers
            self.backend.wait_loaded()
        return receipts(self.answer(from_table(batch)), self.cells_dir, self.attempt)


def render_batch(batch: pa.Table, plans: Mapping[str, CellPlan], parts: Mapping[str, RALParts]) -> pa.Table:
    return to_table(RenderStage(plans, parts)(from_table(batch)))


def parse_batch(batch: pa.Table, plans: Mapping[str, CellPlan]) -> pa.Table:
    return to_table(ParseStage(plans)(from_table(batch)))


def write_batch(batch: pa.Table, cells_dir: str, attempt: str) -> pa.Table:
    """Write the batch as append-only shard files; return the receipt columns only."""
    return receipts(from_table(batch), Path(cells_dir), attempt)


def receipts(rows: list[dict[str, Any]], cells_dir: Path, attempt: str) -> pa.Table:
    """`write_rows`, then the `RECEIPT_COLUMNS` of the written rows: what a pipeline hands the driver."""
    write_rows(rows, cells_dir, attempt)
    return to_table(rows).select(list(RECEIPT_COLUMNS))
