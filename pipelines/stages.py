"""Ray Data wrappers of the RAL's batch stages (`biorab.ral.stages`, `retrieval_stage`, `probe_stage`):
Arrow batch in, Arrow batch out, and nothing else.

Actor classes (`RetrievalActor`, `GenerationActor`) build their index or model once in ``__init__``/on
first use; the task functions (`render_batch`, `parse_batch`, `write_batch`) are stateless.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from biorab.cells import CellPlan
from biorab.generation.base import SamplingParams
from biorab.ral.assembly import RALParts
from biorab.ral.probe_stage import ProbeStage
from biorab.ral.retrieval_stage import RetrievalStage
from biorab.ral.rows import from_table, stamp, to_table
from biorab.ral.stages import GenerationStage, ParseStage, RenderStage
from biorab.runner.execution.deferred_backend import DeferredBackend, run_backend, run_generator
from biorab.runner.store.shards import write_shards

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
    the first cache miss: `biorab.runner.execution.deferred_backend.run_backend`), then generates batches
    through the cache.

    With `plans`, rows of probing cells also get the awareness probe from the same loaded model, right
    after their task generation (the probe does not read the task output, so it need not wait for the
    parse tasks, and a second model copy in another actor pool is avoided).

    `preload`: the driver knows a row will miss the cache (`cached_rows.known_miss`), so a deferred model
    starts loading in a thread as the actor starts, while the first batch is still upstream."""

    def __init__(self, backend: str, backend_params: dict[str, Any], sampling: dict[str, Any],
                 generations_store: str, plans: Mapping[str, CellPlan] | None = None,
                 seeds: Mapping[str, int] | None = None, preload: bool = False) -> None:
        self.backend = run_backend(backend, backend_params)
        if preload and isinstance(self.backend, DeferredBackend):
            self.backend.load_in_background()
        generator = run_generator(backend, backend_params, generations_store, self.backend)
        self.stage = GenerationStage(generator, SamplingParams(**sampling), seeds=seeds)
        self.probe = ProbeStage(plans or {}, self.stage)

    def __call__(self, batch: pa.Table) -> pa.Table:
        if isinstance(self.backend, DeferredBackend):
            # imports stay in one thread at a time: the load imports torch and transformers
            self.backend.wait_loaded()
        return to_table(self.probe(self.stage(from_table(batch))))


def render_batch(batch: pa.Table, plans: Mapping[str, CellPlan], parts: Mapping[str, RALParts]) -> pa.Table:
    return to_table(RenderStage(plans, parts)(from_table(batch)))


def parse_batch(batch: pa.Table, plans: Mapping[str, CellPlan]) -> pa.Table:
    return to_table(ParseStage(plans)(from_table(batch)))


def write_batch(batch: pa.Table, cells_dir: str, attempt: str) -> pa.Table:
    """Write the batch as append-only shard files; return the receipt columns only."""
    rows = from_table(batch)
    stamp(rows, attempt)
    write_shards(rows, Path(cells_dir), attempt)
    return to_table(rows).select(list(RECEIPT_COLUMNS))
