"""The in-process runner: the pipeline's stages, called one batch at a time without Ray.

Used by tests, Serve and ``biorab run --no-ray`` (as `LocalExecutor`); it writes the same shard files as
the Ray pipeline (`pipelines.ray_executor.RayExecutor`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biorab.cells import CellPlan
from biorab.experiment import ExperimentConfig
from biorab.generation.prepare import prepare_for_backend
from biorab.ral.probe_stage import ProbeStage
from biorab.runner.execution import CellRowsFn, ExecutionStats, ProgressFn, rows_per_cell
from biorab.runner.store.shards import write_shards
from biorab.runner.plan.cell_slices import sampling_seeds
from biorab.runner.execution.prefix_order import order_by_prefix, wanted
from biorab.ral.retrieval_stage import RetrievalStage
from biorab.ral.rows import stamp
from biorab.ral.stages import GenerationStage, ParseStage, RenderStage


def run_local(
    rows: Sequence[dict[str, Any]],
    plans: Mapping[str, CellPlan],
    config: ExperimentConfig,
    *,
    cells_dir: Path,
    stores: tuple[Path, Path],
    attempt: str,
    progress: ProgressFn | None = None,
    backend: Any = None,
    cell_rows: CellRowsFn | None = None,
    prefix_order: bool | None = None,
) -> ExecutionStats:
    """Run every pending row through retrieval → render → generate → parse → awareness probe → write, in
    batches of the LLM stage's batch size. `backend` (an already built backend) overrides the config's,
    for tests. The probe acts only on rows of cells whose retrieval setting probes.

    With prefix order (`biorab.runner.execution.prefix_order.wanted`: ``None`` = where the backend has a prefix
    cache), every row is retrieved first and the rows are put in prompt-prefix order before the LLM
    batches are cut."""
    hits_store, generations_store = stores
    retrieve = RetrievalStage(plans, hits_store)
    render = RenderStage(plans)
    generate = GenerationStage(config.backend.name, config.backend.params, config.sampling, generations_store,
                               backend_obj=backend, seeds=sampling_seeds(plans))
    parse = ParseStage(plans)
    probe = ProbeStage(plans, generate)
    stats = ExecutionStats()
    size = config.resources.llm.batch_size
    if progress is not None:
        progress(0, len(rows))  # the total, before the first (possibly long) batch
    retrieved = wanted(config, prefix_order, plans)
    if retrieved:  # hits are cached as they come: a killed run retrieves nothing twice
        rows = order_by_prefix([r for start in range(0, len(rows), size)
                                for r in retrieve([dict(r) for r in rows[start : start + size]])], plans)
    try:
        for start in range(0, len(rows), size):
            batch = [dict(r) for r in rows[start : start + size]]
            if cell_rows is not None:  # these cells start now (their runs open before the generation)
                cell_rows(rows_per_cell(batch, zero=True))
            batch = probe(parse(generate(render(batch if retrieved else retrieve(batch)))))
            stamp(batch, attempt)
            write_shards(batch, cells_dir, attempt)
            n = stats.add_rows(batch)
            if progress is not None:
                progress(n, len(rows))
            if cell_rows is not None:
                cell_rows(rows_per_cell(batch))
    finally:
        if backend is None:
            generate.close()
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

    def run(
        self,
        rows: Sequence[dict[str, Any]],
        plans: Mapping[str, CellPlan],
        config: ExperimentConfig,
        *,
        cells_dir: Path,
        stores: tuple[Path, Path],
        attempt: str,
        progress: ProgressFn | None = None,
        cell_rows: CellRowsFn | None = None,
    ) -> ExecutionStats:
        if self.backend is None:
            prepare_for_backend(config.backend.name, config.backend.params)
        return run_local(rows, plans, config, cells_dir=cells_dir, stores=stores, attempt=attempt,
                         progress=progress, backend=self.backend, cell_rows=cell_rows,
                         prefix_order=self.prefix_order)
