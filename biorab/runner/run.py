"""`run_experiment`: plan → execute (Ray or in-process) → score from disk → report → track.

Reads like the data-flow diagram: each line is one stage of the run.
"""

from __future__ import annotations

import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from biorab.caches import default_store_paths
from biorab.experiment import ExperimentConfig
from biorab.generation.prepare import prepare_for_backend
from biorab.paths import cache_dir
from biorab.runner.drugmech_plan import plan_drugmech
from biorab.runner.drugmech_scoring import render_drugmech_section, score_drugmech
from biorab.runner.execution import ExecutionStats, ProgressFn
from biorab.runner.output import clean_temporaries
from biorab.runner.plan import CellSlice, plan_run
from biorab.runner.report import render_report
from biorab.runner.scoring import CellResult, score_cell, write_summary


@dataclass
class RunResult:
    """What `run_experiment` did: per-cell results, execution counts, and where everything is."""

    run_dir: Path
    cells: list[CellResult]
    stats: ExecutionStats
    total_pending: int
    tracking_uri: str | None
    report_path: Path
    drugmech: dict[str, Any] | None = None  # the DrugMech accuracy report over all DrugMech cells


def new_attempt_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def prepare_run_dir(config: ExperimentConfig, *, resume: bool) -> Path:
    """Create the run dir, drop old cell outputs for a fresh run, save the resolved config."""
    run_dir = config.run_dir()
    if not resume:
        shutil.rmtree(run_dir / "cells", ignore_errors=True)
        shutil.rmtree(run_dir / "predictions", ignore_errors=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    resolved = config.model_dump(mode="json")
    (run_dir / "config.yaml").write_text(yaml.safe_dump(resolved, sort_keys=False), encoding="utf-8")
    return run_dir


def run_experiment(
    config: ExperimentConfig,
    *,
    resume: bool = True,
    use_ray: bool = True,
    progress: ProgressFn | None = None,
    backend: Any = None,
    track: bool | None = None,
) -> RunResult:
    """Run every cell of `config`, skipping instances already on disk (unless ``resume=False``).

    Args:
        config: a validated experiment config.
        resume: keep the rows of earlier attempts and compute only the missing ones.
        use_ray: run the Ray Data pipeline; ``False`` runs the same stages in-process.
        progress: called with (rows just written, rows to write in this run).
        backend: an already built backend for the in-process runner (tests, Serve).
        track: log to MLflow (default: ``config.tracking.enabled``).
    """
    run_dir = prepare_run_dir(config, resume=resume)
    cells_dir = run_dir / "cells"
    slices = plan_run(config, cells_dir)
    dm_slices = plan_drugmech(config, cells_dir)
    for s in slices + dm_slices:
        clean_temporaries(cells_dir / s.plan.cell_id)
    pending = [row for s in slices + dm_slices for row in s.pending]
    tracked = config.tracking.enabled if track is None else track
    # Runs are opened before the work (a crash leaves them to take over); results reach disk before MLflow.
    tracking = _start_tracking(config, run_dir, [s.plan for s in slices + dm_slices]) if tracked else None
    try:
        stats = _execute(config, slices + dm_slices, pending, cells_dir, use_ray=use_ray,
                         progress=tracking.progress(progress) if tracking else progress, backend=backend)
    except BaseException:
        if tracking is not None:
            tracking.fail()
        raise
    results = [score_cell(s.plan, s.examples, cells_dir, run_dir, n_boot=config.n_boot, seed=config.seed)
               for s in slices]
    dm_results, dm_report = score_drugmech(dm_slices, config.drugmech, cells_dir, run_dir)
    results += dm_results
    write_summary(results, stats.to_json(), run_dir, drugmech=dm_report)
    report = run_dir / "report.md"
    text = render_report(config.name, results, stats.to_json(), config.backend.name)
    report.write_text(text + (render_drugmech_section(dm_report) if dm_report else ""), "utf-8")
    uri = _finish_tracking(tracking, config, results, run_dir, report) if tracking else None
    return RunResult(run_dir, results, stats, len(pending), uri, report, dm_report)


def _execute(
    config: ExperimentConfig,
    slices: list[CellSlice],
    pending: list[dict[str, Any]],
    cells_dir: Path,
    *,
    use_ray: bool,
    progress: ProgressFn | None,
    backend: Any,
) -> ExecutionStats:
    if not pending:
        return ExecutionStats()
    plans = {s.plan.cell_id: s.plan for s in slices}
    if backend is None:
        prepare_for_backend(config.backend.name, config.backend.params)
    stores = default_store_paths(cache_dir())
    attempt = new_attempt_id()
    if use_ray:
        from pipelines.ral import run_ray

        return run_ray(pending, plans, config, cells_dir=cells_dir, stores=stores, attempt=attempt,
                       progress=progress)
    from biorab.runner.local import run_local

    return run_local(pending, plans, config, cells_dir=cells_dir, stores=stores, attempt=attempt,
                     progress=progress, backend=backend)


def _start_tracking(config: ExperimentConfig, run_dir: Path, plans: list[Any]) -> Any:
    from biorab.tracking.experiment import start_run_tracking

    return start_run_tracking(config, run_dir, plans)


def _finish_tracking(tracking: Any, config: ExperimentConfig, results: list[CellResult], run_dir: Path,
                     report: Path) -> str:
    from biorab.tracking.experiment import finish_run_tracking

    return finish_run_tracking(tracking, config, results, run_dir, report)
