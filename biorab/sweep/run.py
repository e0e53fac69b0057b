"""`run_sweep`: every run of a sweep, model by model, in one Ray job, tracked as one MLflow parent.

    expand ─▶ check every run (errors before launch) ─▶ open the MLflow parent (RUNNING)
    ─▶ one Ray init ─▶ for each model group: `run_experiment` (resume, caches; each cell's child run
       opens when the cell starts, rows written logged as they come) ─▶ log its scored cells
    ─▶ cells without a twin in their run: the twin from another run of the model (`biorab.sweep.twins`;
       no-retrieval, order and framing twins), its rates logged on the cell's MLflow child
    ─▶ report (tables, plots) ─▶ parent FINISHED

Each model is loaded once per worker: its cells run in one `run_experiment` (one LLM actor pool) before the
next model starts. Within a run, cells are ordered by prompt prefix (`biorab.sweep.expand.prefix_key`).
Output layout is `biorab run`'s (``<output_dir>/<sweep>/<run>/cells/...``), so resume and caches work alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import yaml

from biorab.common.errors import TrackingError
from biorab.common.native_memory import release_free_memory
from biorab.runner.plan.experiment_source import run_cells
from biorab.sweep.config import SweepConfig
from biorab.sweep.expand import SweepRun, expand_runs

SWEEP_FILE = "sweep.yaml"
#: The sweep's table (one row per cell, `biorab.sweep.tables.long_table`) on the parent run.
SWEEP_TABLE = "sweep_table.json"


class SweepProgress(Protocol):
    """What shows a sweep's progress (the CLI's bars or lines): a model's run starts, its cells are
    planned, rows are written (per run and per cell), the run ends."""

    def start_model(self, model: str, cells: int) -> None: ...

    def cells(self, slices: list[Any]) -> Callable[[Any], None]: ...  # -> CellRowsFn

    def rows(self, advance: int, total: int) -> None: ...

    def end_model(self) -> None: ...


@dataclass
class SweepResult:
    """What a sweep did: its runs' results, totals, and where everything is."""

    sweep_dir: Path
    runs: list[Any] = field(default_factory=list)  # biorab.runner.run.RunResult
    cells: int = 0
    generated: int = 0
    cache_hits: int = 0
    failures: int = 0
    tracking_uri: str | None = None
    tracking_error: str | None = None


def prepare_sweep(sweep: SweepConfig, *, path: str | Path | None, limit: int | None) -> list[SweepRun]:
    """The sweep's runs, every problem of every run listed at once before any work
    (`biorab.runner.checks.launch`: models, adapters, encoders, data files, templates, resources and each
    check of `biorab validate`)."""
    from biorab.runner.checks.launch import launch_problems, raise_if_problems

    runs = [replace(r, config=r.config.with_limit(limit)) for r in expand_runs(sweep, path=path)]
    raise_if_problems(launch_problems(launch_units(runs), path=path), path=path)
    return runs


def launch_units(runs: list[SweepRun]) -> list[Any]:
    """The runs as `biorab.runner.checks.launch.LaunchUnit`s, named by their model profile."""
    from biorab.runner.checks.launch import LaunchUnit

    return [LaunchUnit(f"models.{r.model}", r.config, r.config.name) for r in runs]


def run_sweep(
    sweep: SweepConfig,
    *,
    path: str | Path | None = None,
    resume: bool = True,
    executor_for: Callable[[str], Any] | None = None,
    limit: int | None = None,
    echo: Callable[[str], None] | None = None,
    backends: dict[str, Any] | None = None,
    progress: SweepProgress | None = None,
    runs: list[SweepRun] | None = None,
) -> SweepResult:
    """Run every cell of `sweep`.

    Args:
        executor_for: model profile → the executor of its run (the edge passes
            `pipelines.ray_executor.RayExecutor` and starts one Ray for the whole sweep; default: in-process).
        backends: model profile → an already built backend, for in-process tests.
        progress: shown per model and per cell as rows are written (``None``: nothing).
        runs: the runs `prepare_sweep` already checked (the CLI checks before it starts Ray).
    """
    say = echo or (lambda _m: None)
    if runs is None:
        runs = prepare_sweep(sweep, path=path, limit=limit)
    out = SweepResult(sweep.sweep_dir())
    out.sweep_dir.mkdir(parents=True, exist_ok=True)
    (out.sweep_dir / SWEEP_FILE).write_text(yaml.safe_dump(sweep.model_dump(mode="json"), sort_keys=False))
    tracking = _start_tracking(sweep, out.sweep_dir) if sweep.tracking.enabled else None
    key = _parent_key(sweep, out.sweep_dir)
    try:
        _build_indexes(runs, say)
        for run in runs:
            cells = len(run_cells(run.config))  # of every source: DrugMech cells too
            say(f"model {run.model}: run {run.config.name}, {cells} cells")
            executor = _executor(run.model, executor_for, backends)
            if progress is not None:
                progress.start_model(run.model, cells)
            _add(out, _run_one(run, resume=resume, executor=executor, tracking=tracking, key=key,
                               shown=progress))
            if progress is not None:
                progress.end_model()
            release_free_memory()  # what the run's scoring and logging freed, before the next run's peak
        # every run is scored: a cell whose no-retrieval, order or framing twin is in another run (block)
        # gets its rates now, and its MLflow child (logged when its run finished) gets them too
        from biorab.sweep.twins import attribute_across_runs

        before = _logged(out) if tracking is not None else {}
        paired = attribute_across_runs(list(zip(runs, out.runs, strict=True)))
        if tracking is not None and paired:
            from biorab.tracking.experiment import log_twin_metrics

            log_twin_metrics(tracking, key, paired, before)
        if tracking is not None:  # the report too: a failure there must not leave the parent RUNNING
            _finish_tracking(sweep, tracking, out)
    except BaseException as e:
        if tracking is not None:  # every run closed: KILLED on a stop (SIGTERM, Ctrl-C), else FAILED
            tracking.fail("KILLED" if isinstance(e, KeyboardInterrupt) else "FAILED")
        raise
    return out


def _logged(out: SweepResult) -> dict[int, Any]:
    """What MLflow holds of every cell of the sweep's runs (by ``id`` of its result), before the twins from
    other runs change their metrics."""
    from biorab.tracking.experiment import logged

    return {id(cell): logged(cell) for run in out.runs for cell in run.cells}


def _build_indexes(runs: list[SweepRun], say: Callable[[str], None]) -> None:
    """Every index of the sweep, once per corpus and retriever, before the first run (`biorab.sweep.indexes`):
    its own progress instead of minutes of "0 rows" in the first retrieval batch."""
    from biorab.sweep.indexes import build_indexes, index_jobs

    jobs = index_jobs([r.config for r in runs])
    if not jobs:
        return
    say(f"retrieval indexes: {len(jobs)} (corpus x retriever), built once for the whole sweep")
    stats = build_indexes(jobs, echo=say)
    say(f"retrieval indexes: {stats.built} built, {stats.loaded} loaded (built before), "
        f"{stats.seconds:.1f} s")


def _executor(model: str, executor_for: Callable[[str], Any] | None,
              backends: dict[str, Any] | None) -> Any:
    from biorab.runner.executors.local import LocalExecutor

    backend = backends.get(model) if backends else None
    if backend is not None or executor_for is None:
        return LocalExecutor(backend)
    return executor_for(model)


def _run_one(run: SweepRun, *, resume: bool, executor: Any, tracking: Any, key: str,
             shown: SweepProgress | None) -> Any:
    from biorab.runner import run_experiment
    from biorab.runner.executors import fan_out
    from biorab.sweep.throughput import record_throughput
    from biorab.tracking.experiment import model_digest

    start = time.monotonic()
    inner = shown.rows if shown is not None else None
    progress = tracking.progress(inner) if tracking is not None else inner

    def watch(slices: list[Any]) -> Callable[[Any], None] | None:
        fns: list[Any] = [shown.cells(slices)] if shown is not None else []
        if tracking is not None:
            fns.append(_watch_cells(tracking, run, key, [s.plan for s in slices]))
        return fan_out(fns)

    result = run_experiment(run.config, executor=executor, resume=resume, progress=progress, track=False,
                            watch=watch)
    record_throughput(result.run_dir, model_digest=model_digest(run.config), generated=result.stats.generated,
                      wall_s=time.monotonic() - start,
                      mean_completion_tokens=_fresh_completion_tokens(result))
    if tracking is not None:  # the model's cells are scored: log them now, not at the end of the sweep
        from biorab.tracking.experiment import log_results

        log_results(tracking, key, run.config, result.cells, result.run_dir)
    return result


def _parent_key(sweep: SweepConfig, sweep_dir: Path) -> str:
    from biorab.tracking.experiment import parent_key

    return parent_key("sweep", sweep.name, sweep_dir)


def _fresh_completion_tokens(result: Any) -> float:
    """Mean completion tokens of the run's freshly generated rows (not read from the cache)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    total, n = 0, 0
    for cell in result.cells:
        table = pq.read_table(cell.predictions_path, columns=["gen_completion_tokens", "gen_cached"])
        fresh = table.filter(pc.invert(pc.fill_null(table["gen_cached"], True)))
        total += int(pc.sum(fresh["gen_completion_tokens"]).as_py() or 0)
        n += fresh.num_rows
    return total / n if n else 0.0


def _add(out: SweepResult, result: Any) -> None:
    out.runs.append(result)
    out.cells += len(result.cells)
    out.generated += result.stats.generated
    out.cache_hits += result.stats.generation_cache_hits
    out.failures += result.stats.generation_failures


def _watch_cells(tracking: Any, run: SweepRun, key: str, plans: list[Any]) -> Any:
    """The children of one run's cells (registered now, opened as each cell starts)."""
    from biorab.tracking.cell_runs import cell_entry
    from biorab.tracking.experiment import model_digest

    digest = model_digest(run.config)
    entries = {p.cell_id: cell_entry(run.config, p, key, model=run.model, model_digest=digest,
                                     method=getattr(p.retrieval, "method", "none")) for p in plans}
    return tracking.watch_cells(entries)


def _start_tracking(sweep: SweepConfig, sweep_dir: Path) -> Any:
    """The sweep's parent run (the sweep config as params); children open as their cells start."""
    from biorab.tracking.flatten import mlflow_params
    from biorab.tracking.live import LiveTracking, provenance_tags
    from biorab.tracking.mlflow_tracker import artifact_root
    from biorab.tracking.preflight import resolve_uri

    uri = resolve_uri(sweep.tracking.uri, sweep_dir)
    key = _parent_key(sweep, sweep_dir)
    tracking = LiveTracking.start(
        results_dir=sweep_dir, uri=uri, experiment=sweep.tracking.experiment or sweep.name,
        artifact_location=artifact_root(uri, sweep_dir), parent_key=key, parent_name=sweep.name,
        params=mlflow_params(sweep.model_dump(mode="json", exclude={"throughput"})),
        tags={"biorab.kind": "sweep", **provenance_tags()})
    return tracking


def _finish_tracking(sweep: SweepConfig, tracking: Any, out: SweepResult) -> None:
    """Write the report beside the outputs, log it (tables and plots) on the parent, end the parent."""
    from biorab.sweep.collect import collect
    from biorab.sweep.report import write_report
    from biorab.sweep.tables import long_table

    files = write_report(sweep, track=False)
    artifacts: list[tuple[Path, str | None]] = [(out.sweep_dir / SWEEP_FILE, None)]
    artifacts += [(f, "report") for f in files]
    from biorab.tracking.ui_link import headline_metrics, runs_view

    table = long_table(collect(sweep)[0])
    view = runs_view(headline_metrics(cell for run in out.runs for cell in run.cells))
    try:
        out.tracking_uri = tracking.finish(artifacts, tables={SWEEP_TABLE: table}, view=view)
    except TrackingError as e:
        out.tracking_error = str(e)
