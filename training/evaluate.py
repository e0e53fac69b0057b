"""Evaluate after training: the tuned RAL against the untuned one on the same held-out slice, through the
same runner `biorab run` uses, reported per cell as the paired difference (tuned minus untuned) with its
paired-bootstrap CI and McNemar's test (`biorab.metrics.paired.compare`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CellComparison:
    cell: str
    task: str
    comparison: Any  # biorab.metrics.paired.PairedComparison


def tuned_config(config: Any, adapter: str) -> Any:
    """`config` with the backend's adapter set to `adapter` and ``-tuned`` appended to its name."""
    backend = config.backend.model_copy(update={"params": {**config.backend.params, "adapter_path": adapter}})
    return config.model_copy(update={"name": f"{config.name}-tuned", "backend": backend})


def compare_tuned(
    config_path: str | Path,
    adapter: str,
    *,
    limit: int | None = None,
    use_ray: bool = False,
    output_dir: str | None = None,
) -> list[CellComparison]:
    """Run CONFIG as is and with `adapter` (a folder or ``models:/`` URI), then compare cell by cell."""
    from biorab.runner import run_experiment
    from biorab.runner.checks.validate import load_experiment

    base = load_experiment(config_path).with_limit(limit)
    if output_dir is not None:
        base = base.model_copy(update={"output_dir": output_dir})
    untuned = run_experiment(base, executor=_executor(use_ray))
    tuned = run_experiment(tuned_config(base, adapter), executor=_executor(use_ray))
    return [
        CellComparison(a.plan.label, a.plan.task, _compare(a, b, base))
        for a, b in zip(untuned.cells, tuned.cells, strict=True)
    ]


def _executor(use_ray: bool) -> Any:
    if use_ray:
        from pipelines.ray_executor import RayExecutor

        return RayExecutor()
    from biorab.runner.executors.local import LocalExecutor

    return LocalExecutor()


def _compare(cell_a: Any, cell_b: Any, config: Any) -> Any:
    import pyarrow.parquet as pq

    from biorab.common.labels import LABELS
    from biorab.metrics.paired import compare
    from biorab.ral.specs.rows import from_table, row_prediction

    rows_a = from_table(pq.read_table(cell_a.predictions_path))
    by_id = {r["id"]: r for r in from_table(pq.read_table(cell_b.predictions_path))}
    rows_b = [by_id[r["id"]] for r in rows_a]
    return compare(
        cell_a.plan.task,
        [r["label"] for r in rows_a],
        [row_prediction(r) for r in rows_a],
        [row_prediction(r) for r in rows_b],
        labels=LABELS.get(cell_a.plan.dataset),
        n_boot=config.n_boot,
        seed=config.seed,
    )
