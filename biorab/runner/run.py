"""`run_experiment`: plan → execute → score from disk → report → track.

Reads like the data-flow diagram: each line is one stage of the run. The executor (in-process or Ray
Data) is chosen by the caller and passed in; the cells come from the experiment sources
(`biorab.runner.plan.experiment_source`), so this module knows neither Ray nor any kind of experiment.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from biorab.attribution.cell_attribution import attribute_cells
from biorab.attribution.framing import add_framing
from biorab.attribution.order import add_order_flips
from biorab.common.atomic_files import write_text_atomic
from biorab.common.paths import cache_dir
from biorab.experiment import ExperimentConfig
from biorab.ral import MethodCorpora, RALParts, assemble_cells
from biorab.ral.specs.cell_records import CellPlan, CellResult, CellSlice
from biorab.runner.checks.preflight import check_output_dir
from biorab.runner.executors import (
    CellRowsFn,
    ExecutionStats,
    Executor,
    ProgressFn,
    fan_out,
)
from biorab.runner.executors.local import LocalExecutor
from biorab.runner.executors.request import execution_request
from biorab.runner.plan.experiment_source import ExperimentSource, experiment_sources
from biorab.runner.scoring.cell_metrics import write_summary
from biorab.runner.scoring.extra_metrics import add_extra_results
from biorab.runner.scoring.run_report import render_report
from biorab.runner.scoring.usage import add_usage
from biorab.runner.store.run_lock import run_lock
from biorab.runner.store.shards import clean_temporaries


@dataclass
class RunResult:
    """What `run_experiment` did: per-cell results, execution counts, and where everything is.

    `sections` holds each experiment source's run-level section (e.g. ``sections["drugmech"]``, the
    DrugMech accuracy report over all DrugMech cells), as written to ``summary.json``."""

    run_dir: Path
    cells: list[CellResult]
    stats: ExecutionStats
    total_pending: int
    tracking_uri: str | None
    report_path: Path
    sections: dict[str, Any] = field(default_factory=dict)


def new_attempt_id() -> str:
    return time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def prepare_run_dir(config: ExperimentConfig, *, resume: bool) -> Path:
    """Create the run dir, drop old cell outputs for a fresh run, save the resolved config (the caller
    holds the run dir's lock, `biorab.runner.store.run_lock`)."""
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
    executor: Executor | None = None,
    resume: bool = True,
    progress: ProgressFn | None = None,
    track: bool | None = None,
    watch: Callable[[list[CellSlice]], CellRowsFn | None] | None = None,
) -> RunResult:
    """Run every cell of `config`, skipping instances already on disk (unless ``resume=False``).

    Args:
        config: a validated experiment config.
        executor: what runs the pending rows: `biorab.runner.executors.local.LocalExecutor` (the default;
            pass ``LocalExecutor(backend)`` to use an already built backend) or
            `pipelines.ray_executor.RayExecutor`.
        resume: keep the rows of earlier attempts and compute only the missing ones.
        progress: called with (rows just written, rows to write in this run).
        track: log to MLflow (default: ``config.tracking.enabled``).
        watch: called with the run's cells once they are planned (each `CellSlice`: its plan and its
            pending rows); what it returns is called as each cell starts and as its rows are written
            (`biorab.runner.executors.CellRowsFn`; a sweep opens its cells' MLflow runs and shows their
            progress with it).
    """
    check_output_dir(config)
    run_dir = config.run_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    with run_lock(run_dir):
        return _run_locked(config, executor=executor or LocalExecutor(), resume=resume, progress=progress,
                           track=track, watch=watch)


def _run_locked(
    config: ExperimentConfig, *, executor: Executor, resume: bool, progress: ProgressFn | None,
    track: bool | None, watch: Callable[[list[CellSlice]], CellRowsFn | None] | None,
) -> RunResult:
    run_dir = prepare_run_dir(config, resume=resume)
    cells_dir = run_dir / "cells"
    planned = [(source, source.plan(config, cells_dir)) for source in experiment_sources()]
    slices = [s for _, source_slices in planned for s in source_slices]
    for s in slices:
        clean_temporaries(cells_dir / s.plan.cell_id)
    plans = {s.plan.cell_id: s.plan for s in slices}
    parts = _assemble(config, plans, getattr(executor, "backend", None))
    methods = _method_outcomes(config, parts)
    pending = [row for s in slices for row in s.pending]
    tracked = config.tracking.enabled if track is None else track
    # The parent and child runs are opened in a thread while the work starts up, each cell's child as the
    # cell starts (a crash leaves them to take over); results reach disk before MLflow.
    opening = _start_tracking(config, run_dir, list(plans.values())) if tracked else None
    watchers = [opening.cell_rows()] if opening is not None else []
    if watch is not None:
        watchers.append(watch(slices))
    try:
        stats = _execute(config, plans, parts, pending, cells_dir, executor,
                         opening.progress(progress) if opening else progress, fan_out(watchers))
    except BaseException:
        if opening is not None:
            opening.fail()
        raise
    tracking = opening.wait() if opening else None
    results, sections, text = _score(config, planned, cells_dir, run_dir)
    sections["usage"] = add_usage(results, config)  # tokens (and cost) per cell and for the run
    add_extra_results(results, slices, methods, config)
    # Per-instance attribution needs every cell's rows scored first: the flip reads the cell's twin.
    attribute_cells(results, cells_dir, n_boot=config.n_boot, seed=config.seed)
    add_order_flips(results, n_boot=config.n_boot, seed=config.seed)  # same hits, another order
    add_framing(results, cells_dir, n_boot=config.n_boot, seed=config.seed)  # same instance, asked otherwise
    report = write_run_files(config, results, stats, sections, run_dir, text=text)
    uri = _finish_tracking(tracking, config, results, run_dir, report) if tracking else None
    return RunResult(run_dir, results, stats, len(pending), uri, report, sections)


def write_run_files(config: ExperimentConfig, results: list[CellResult], stats: ExecutionStats,
                    sections: dict[str, Any], run_dir: Path, *, text: str | None = None) -> Path:
    """Write the run's ``summary.json`` and ``report.md`` from its scored cells; returns the report's path.

    `text` is the sources' report sections; ``None`` renders them again from `sections` (a sweep rewrites a
    run's files after re-attributing its cells against twins in other runs, `biorab.sweep.twins`)."""
    if text is None:
        text = "".join(s.report_section(sections[s.name]) for s in experiment_sources() if s.name in sections)
    write_summary(results, stats.to_json(), run_dir, sections=sections)
    report = run_dir / "report.md"
    table = render_report(config.name, results, stats.to_json(), config.backend.name)
    write_text_atomic(report, table + text)
    return report


def _assemble(config: ExperimentConfig, plans: dict[str, CellPlan], backend: Any) -> dict[str, RALParts]:
    """Each cell's RAL parts (`biorab.ral.assemble_cells`), the corpora of cells with a corpus method
    transformed there (before the pipeline: the retrieval stage indexes the transformed corpus) with the
    executor's backend, or one built from the config and freed before the pipeline starts its own."""
    batch_size = max(config.resources.llm.batch_size, 64)
    with MethodCorpora(config, cache_dir(), backend=backend, batch_size=batch_size) as methods:
        return assemble_cells(plans, methods=methods)


def _method_outcomes(config: ExperimentConfig, parts: dict[str, RALParts]) -> dict[str, Any]:
    """The corpus method's scores of each cell with one; no import when no cell has one."""
    if not any(p.corpus_dir is not None for p in parts.values()):
        return {}
    from biorab.methods.apply import method_outcomes

    return dict(method_outcomes(parts, config))


def _execute(config: ExperimentConfig, plans: dict[str, CellPlan], parts: dict[str, RALParts],
             pending: list[dict[str, Any]], cells_dir: Path, executor: Executor, progress: ProgressFn | None,
             cell_rows: CellRowsFn | None) -> ExecutionStats:
    if not pending:
        return ExecutionStats()
    request = execution_request(pending, plans, parts, config, cells_dir=cells_dir, attempt=new_attempt_id(),
                                progress=progress, cell_rows=cell_rows)
    return executor.run(request)


def _score(config: ExperimentConfig, planned: list[tuple[ExperimentSource, list[CellSlice]]],
           cells_dir: Path, run_dir: Path) -> tuple[list[CellResult], dict[str, Any], str]:
    """Every source's cell results, run-level sections, and the report text of those sections."""
    results: list[CellResult] = []
    sections: dict[str, Any] = {}
    text = ""
    for source, source_slices in planned:
        scored = source.score(source_slices, config, cells_dir, run_dir)
        results += scored.results
        if scored.section is not None:
            sections[source.name] = scored.section
            text += source.report_section(scored.section)
    return results, sections, text


def _start_tracking(config: ExperimentConfig, run_dir: Path, plans: list[CellPlan]) -> Any:
    """The run's MLflow parent, opened in a thread from the executor's first progress call on, and its
    cells' children, each opened as the cell starts (`biorab.tracking.background`)."""
    from biorab.tracking.background import BackgroundTracking
    from biorab.tracking.experiment import start_run_tracking, watch_run_cells

    return BackgroundTracking(lambda: start_run_tracking(config, run_dir),
                              watch_cells=lambda tracking: watch_run_cells(tracking, config, run_dir, plans))


def _finish_tracking(tracking: Any, config: ExperimentConfig, results: list[CellResult], run_dir: Path,
                     report: Path) -> str:
    from biorab.tracking.experiment import finish_run_tracking

    return finish_run_tracking(tracking, config, results, run_dir, report)
