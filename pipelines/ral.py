"""The retrieval-augmented LLM (RAL) pipeline on Ray Data.

    examples → retrieval (actor pool) → render (tasks) → LLM (actor pool | vLLM processor; the
             awareness probe of probing cells runs in the same LLM actor) → parse (tasks)
             → write Parquet shards (tasks) → receipts to the driver

Each stage is a `biorab.runner.stages` callable; this module only adds resources, batching and I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biorab.cells import CellPlan
from biorab.experiment import ExperimentConfig, StageResources
from biorab.generation.prepare import prepare_for_backend
from biorab.runner.execution import ExecutionStats, ProgressFn
from biorab.runner.plan import sampling_seeds
from biorab.runner.rows import from_table, to_table
from pipelines.ray_setup import init_ray
from pipelines.stages import GenerationActor, RetrievalActor, parse_batch, render_batch, write_batch


def _actor_args(res: StageResources) -> dict[str, Any]:
    import ray.data

    return {
        "compute": ray.data.ActorPoolStrategy(size=res.pool_size),
        "num_cpus": res.num_cpus,
        "num_gpus": res.num_gpus or None,
        "batch_size": res.batch_size,
        "batch_format": "pyarrow",
    }


def input_blocks(rows: Sequence[dict[str, Any]], blocks: int) -> list[Any]:
    """`rows` as `blocks` Arrow tables of near-equal size.

    Splitting on the driver replaces ``.repartition(n)``: a repartition runs shuffle tasks that need a whole
    CPU each, which can never be scheduled once the actor pools hold their CPUs on a 2-CPU machine (the
    deadlock of docs/notes/ray_on_small_machines.md, hit for real with the smoke job).
    """
    table = to_table(rows)
    blocks = max(1, min(blocks, table.num_rows))
    bounds = [round(i * table.num_rows / blocks) for i in range(blocks + 1)]
    return [table.slice(lo, hi - lo) for lo, hi in zip(bounds, bounds[1:], strict=False) if hi > lo]


def build_pipeline(
    rows: Sequence[dict[str, Any]],
    plans: Mapping[str, CellPlan],
    config: ExperimentConfig,
    *,
    cells_dir: Path,
    stores: tuple[Path, Path],
    attempt: str,
) -> Any:
    """The lazy Ray Dataset of write receipts for `rows` (nothing runs until it is consumed)."""
    import ray.data

    res = config.resources
    # Light stages take LLM-sized batches: a larger default batch would bundle every block into one task,
    # and the LLM actor would then get one big bundle (no streaming, no progress until the end).
    task: dict[str, Any] = {"num_cpus": res.task_num_cpus, "batch_format": "pyarrow",
                            "batch_size": res.llm.batch_size, "fn_kwargs": {"plans": dict(plans)}}
    blocks = res.blocks or min(64, -(-len(rows) // res.llm.batch_size))
    ds: Any = ray.data.from_arrow(input_blocks(rows, blocks))
    if any(p.retrieves for p in plans.values()):
        ds = ds.map_batches(RetrievalActor, fn_constructor_kwargs={"plans": dict(plans),
                            "hits_store": str(stores[0])}, **_actor_args(res.retrieval))
    ds = ds.map_batches(render_batch, **task)
    ds = _llm_stage(ds, config, str(stores[1]), plans)
    ds = ds.map_batches(parse_batch, **task)
    return ds.map_batches(write_batch, num_cpus=res.task_num_cpus, batch_format="pyarrow",
                          batch_size=res.llm.batch_size,
                          fn_kwargs={"cells_dir": str(cells_dir), "attempt": attempt})


def _llm_stage(ds: Any, config: ExperimentConfig, generations_store: str,
               plans: Mapping[str, CellPlan]) -> Any:
    if config.resources.llm_engine == "vllm_processor":  # refused at validation for probing cells
        from pipelines.vllm_processor import vllm_processor_stage

        return vllm_processor_stage(ds, config, generations_store)
    kwargs = {"backend": config.backend.name, "backend_params": dict(config.backend.params),
              "sampling": config.sampling.model_dump(), "generations_store": generations_store,
              # only the probing cells' plans: the actor probes their rows after the task generation
              "plans": {k: p for k, p in plans.items() if p.probes},
              "seeds": sampling_seeds(plans)}  # DrugMech run r samples with seed + r
    return ds.map_batches(GenerationActor, fn_constructor_kwargs=kwargs, **_actor_args(config.resources.llm))


def run_ray(
    rows: Sequence[dict[str, Any]],
    plans: Mapping[str, CellPlan],
    config: ExperimentConfig,
    *,
    cells_dir: Path,
    stores: tuple[Path, Path],
    attempt: str,
    progress: ProgressFn | None = None,
) -> ExecutionStats:
    """Run the pipeline over `rows`, streaming receipts to count progress; shuts down a Ray it started."""
    import ray

    started = init_ray(config.resources)
    try:
        ds = build_pipeline(rows, plans, config, cells_dir=cells_dir, stores=stores, attempt=attempt)
        stats = ExecutionStats()
        if progress is not None:
            progress(0, len(rows))  # the total, before the first (possibly long) batch
        for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            n = stats.add_rows(from_table(batch))
            if progress is not None:
                progress(n, len(rows))
        return stats
    finally:
        if started:
            ray.shutdown()


class RayExecutor:
    """The Ray Data `biorab.runner.execution.Executor` (``biorab run`` without ``--no-ray``)."""

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
        prepare_for_backend(config.backend.name, config.backend.params)  # once, before actors load it
        return run_ray(rows, plans, config, cells_dir=cells_dir, stores=stores, attempt=attempt,
                       progress=progress)
