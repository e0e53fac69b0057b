"""The in-process runner: the pipeline's stages, called one batch at a time without Ray.

Used by tests, Serve and ``biorab run --no-ray`` (as `LocalExecutor`); it writes the same shard files as
the Ray pipeline (`pipelines.ral.RayExecutor`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biorab.cells import CellPlan
from biorab.experiment import ExperimentConfig
from biorab.generation.prepare import prepare_for_backend
from biorab.runner.awareness_stage import ProbeStage
from biorab.runner.execution import ExecutionStats, ProgressFn
from biorab.runner.output import write_shards
from biorab.runner.plan import sampling_seeds
from biorab.runner.retrieval_stage import RetrievalStage
from biorab.runner.rows import stamp
from biorab.runner.stages import GenerationStage, ParseStage, RenderStage


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
) -> ExecutionStats:
    """Run every pending row through retrieval → render → generate → parse → awareness probe → write, in
    batches of the LLM stage's batch size. `backend` (an already built backend) overrides the config's,
    for tests. The probe acts only on rows of cells whose retrieval setting probes."""
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
    try:
        for start in range(0, len(rows), size):
            batch = [dict(r) for r in rows[start : start + size]]
            batch = probe(parse(generate(render(retrieve(batch)))))
            stamp(batch, attempt)
            write_shards(batch, cells_dir, attempt)
            n = stats.add_rows(batch)
            if progress is not None:
                progress(n, len(rows))
    finally:
        if backend is None:
            generate.close()
    return stats


class LocalExecutor:
    """The in-process `biorab.runner.execution.Executor`.

    Args:
        backend: an already built backend (tests, Serve); ``None`` builds the config's backend (after
            preparing its model files) and closes it at the end.
    """

    def __init__(self, backend: Any = None) -> None:
        self.backend = backend

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
    ) -> ExecutionStats:
        if self.backend is None:
            prepare_for_backend(config.backend.name, config.backend.params)
        return run_local(rows, plans, config, cells_dir=cells_dir, stores=stores, attempt=attempt,
                         progress=progress, backend=self.backend)
