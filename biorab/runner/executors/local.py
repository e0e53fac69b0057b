"""The in-process executor: the run's pipeline (`biorab.ral.specs.pipeline`), called one batch at a time
without Ray.

Used by tests, Serve and ``biorab run --no-ray`` (as `LocalExecutor`); it writes the same shard files as
the Ray pipeline (`pipelines.ray_executor.RayExecutor`).
"""

from __future__ import annotations

from typing import Any

from biorab.execution import ExecutionRequest, ExecutionStats, rows_per_cell
from biorab.generation.prepare import prepare_for_backend
from biorab.ral.parts.generator import CachedGenerator


def run_local(request: ExecutionRequest, *, backend: Any = None,
              prefix_order: bool | None = None) -> ExecutionStats:
    """Run every pending row through the pipeline (retrieve → render → generate → awareness probe →
    parse) and write it, in batches of the LLM stage's batch size. `backend` (an already built backend)
    overrides the config's, for tests. The probe acts only on rows of cells whose retrieval setting probes.

    With prefix order (`ExecutionRequest.prefix_ordered`: ``None`` = where the backend has a prefix
    cache), the retrieval segment runs over every row first and the rows are put in prompt-prefix order
    before the LLM batches are cut."""
    generator = request.pipeline.generator(backend)
    try:
        return _run_batches(request, generator, prefix_order)
    finally:
        if backend is None:
            generator.close()


def _run_batches(request: ExecutionRequest, generator: CachedGenerator,
                 prefix_order: bool | None) -> ExecutionStats:
    rows, progress, cell_rows = request.rows, request.progress, request.cell_rows
    pipeline = request.pipeline.build(generator)
    retrieve, answer = pipeline.split(after="retrieve")
    stats = ExecutionStats()
    size = request.config.resources.llm.batch_size
    if progress is not None:
        progress(0, len(rows))  # the total, before the first (possibly long) batch
    retrieved = request.prefix_ordered(prefix_order)
    if retrieved:  # hits are cached as they come: a killed run retrieves nothing twice
        rows = request.order([r for start in range(0, len(rows), size)
                              for r in retrieve([dict(r) for r in rows[start : start + size]])])
    for start in range(0, len(rows), size):
        batch = [dict(r) for r in rows[start : start + size]]
        if cell_rows is not None:  # these cells start now (their runs open before the generation)
            cell_rows(rows_per_cell(batch, zero=True))
        batch = answer(batch) if retrieved else pipeline(batch)
        request.write(batch)
        n = stats.add_rows(batch)
        if progress is not None:
            progress(n, len(rows))
        if cell_rows is not None:
            cell_rows(rows_per_cell(batch))
    return stats


class LocalExecutor:
    """The in-process `biorab.execution.Executor`.

    Args:
        backend: an already built backend (tests, Serve); ``None`` builds the config's backend (after
            preparing its model files) and closes it at the end.
        prefix_order: put retrieved rows in prompt-prefix order before batching (``None``: where the
            backend has a prefix cache, `biorab.execution.ExecutionRequest.prefix_ordered`).
    """

    def __init__(self, backend: Any = None, *, prefix_order: bool | None = None) -> None:
        self.backend = backend
        self.prefix_order = prefix_order

    def run(self, request: ExecutionRequest) -> ExecutionStats:
        if self.backend is None:
            prepare_for_backend(request.config.backend.name, request.config.backend.params)
        return run_local(request, backend=self.backend, prefix_order=self.prefix_order)
