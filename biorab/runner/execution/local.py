"""The in-process executor: the RAL's batch stages (`biorab.ral.retrieval_stage`, then
`biorab.ral.answer_stage`), called one batch at a time without Ray.

Used by tests, Serve and ``biorab run --no-ray`` (as `LocalExecutor`); it writes the same shard files as
the Ray pipeline (`pipelines.ray_executor.RayExecutor`).
"""

from __future__ import annotations

from typing import Any

from biorab.generation.prepare import prepare_for_backend
from biorab.ral.answer_stage import AnswerStage
from biorab.ral.generator import CachedGenerator
from biorab.ral.retrieval_stage import RetrievalStage
from biorab.ral.stages import GenerationStage
from biorab.runner.execution.deferred_backend import run_generator
from biorab.runner.execution.executor import ExecutionRequest, ExecutionStats, rows_per_cell
from biorab.runner.execution.prefix_order import order_by_prefix, wanted
from biorab.runner.plan.cell_slices import sampling_seeds
from biorab.runner.store.shards import write_rows


def run_local(request: ExecutionRequest, *, backend: Any = None,
              prefix_order: bool | None = None) -> ExecutionStats:
    """Run every pending row through retrieval → render → generate → awareness probe → parse → write, in
    batches of the LLM stage's batch size. `backend` (an already built backend) overrides the config's,
    for tests. The probe acts only on rows of cells whose retrieval setting probes.

    With prefix order (`biorab.runner.execution.prefix_order.wanted`: ``None`` = where the backend has a
    prefix cache), every row is retrieved first and the rows are put in prompt-prefix order before the LLM
    batches are cut."""
    config = request.config
    generator = run_generator(config.backend.name, config.backend.params, request.generations_store, backend)
    try:
        return _run_batches(request, generator, prefix_order)
    finally:
        if backend is None:
            generator.close()


def _run_batches(request: ExecutionRequest, generator: CachedGenerator,
                 prefix_order: bool | None) -> ExecutionStats:
    config, plans, rows = request.config, request.plans, request.rows
    progress, cell_rows = request.progress, request.cell_rows
    retrieve = RetrievalStage(plans, request.parts, request.hits_store)
    answer = AnswerStage(plans, request.parts,
                         GenerationStage(generator, config.sampling, seeds=sampling_seeds(plans)))
    stats = ExecutionStats()
    size = config.resources.llm.batch_size
    if progress is not None:
        progress(0, len(rows))  # the total, before the first (possibly long) batch
    retrieved = wanted(config, prefix_order, plans)
    if retrieved:  # hits are cached as they come: a killed run retrieves nothing twice
        rows = order_by_prefix([r for start in range(0, len(rows), size)
                                for r in retrieve([dict(r) for r in rows[start : start + size]])], plans)
    for start in range(0, len(rows), size):
        batch = [dict(r) for r in rows[start : start + size]]
        if cell_rows is not None:  # these cells start now (their runs open before the generation)
            cell_rows(rows_per_cell(batch, zero=True))
        batch = answer(batch if retrieved else retrieve(batch))
        write_rows(batch, request.cells_dir, request.attempt)
        n = stats.add_rows(batch)
        if progress is not None:
            progress(n, len(rows))
        if cell_rows is not None:
            cell_rows(rows_per_cell(batch))
    return stats


class LocalExecutor:
    """The in-process `biorab.runner.execution.Executor`.

    Args:
        backend: an already built backend (tests, Serve); ``None`` builds the config's backend (after
            preparing its model files) and closes it at the end.
        prefix_order: put retrieved rows in prompt-prefix order before batching (``None``: where the
            backend has a prefix cache, `biorab.runner.execution.prefix_order.wanted`).
    """

    def __init__(self, backend: Any = None, *, prefix_order: bool | None = None) -> None:
        self.backend = backend
        self.prefix_order = prefix_order

    def run(self, request: ExecutionRequest) -> ExecutionStats:
        if self.backend is None:
            prepare_for_backend(request.config.backend.name, request.config.backend.params)
        return run_local(request, backend=self.backend, prefix_order=self.prefix_order)
