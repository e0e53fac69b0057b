"""`biorab run <config.yaml>`: the RAL pipeline with a progress bar and a final metrics table."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer


def run(
    config: Annotated[Path, typer.Argument(help="experiment YAML (see jobs/smoke.yaml)")],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="first N rows of each dataset")] = None,
    resume: Annotated[bool, typer.Option("--resume/--fresh", metavar="",
        help="keep rows on disk, or start over")] = True,
    no_ray: Annotated[bool, typer.Option("--no-ray/--ray", metavar="",
        help="run the same stages in-process")] = False,
    output_dir: Annotated[Path | None, typer.Option("--output-dir", help="override output_dir")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="BioRAB data root (overrides data_dir)")]
    = None,
    no_fetch: Annotated[bool, typer.Option("--no-fetch/--fetch", metavar="",
        help="fail instead of fetching missing data")] = False,
    backend: Annotated[str | None, typer.Option("--backend", help="replace the config's backend by this one "
                                                "with default params (e.g. fake: the plumbing, no model)")]
    = None,
    rehearse: Annotated[bool, typer.Option("--rehearse", help="on this machine: the model -> the fake "
                                           "engine, GPUs -> local CPUs, tracking -> a local store, encoders "
                                           "that cannot load -> MiniLM (each printed); own outputs, caches")]
    = False,
) -> None:
    """Run every (dataset × retrieval setting) cell of CONFIG, score it with CIs and track it in MLflow.

    With no data folder on this machine, first fetches the data sets CONFIG reads (``biorab data fetch``
    into its default folder; from ``$BIORAB_DATA_MIRROR`` when set), unless ``--no-fetch``.
    """
    from rich.console import Console

    from biorab.cli.support.stop_signals import Stopped, exit_stopped, install_stop_handlers
    from biorab.runner import run_experiment
    from biorab.runner.checks.preflight import preflight
    from biorab.runner.plan.experiment_source import experiment_sources

    install_stop_handlers()  # SIGTERM and Ctrl-C: one line, exit 143 / 130, MLflow runs closed
    started = time.perf_counter()
    err = Console(stderr=True)
    if rehearse:
        from biorab.cli.sweep import use_rehearsal_cache

        use_rehearsal_cache()
    cfg = _load(config, data_dir=data_dir, fetch=not no_fetch, backend=backend, err=err).with_limit(limit)
    if rehearse:
        from biorab.sweep.rehearsal import rehearse_run

        cfg, subs = rehearse_run(cfg, output_dir=output_dir)
        for sub in subs:
            typer.echo(sub.line(), err=True)  # one line each, never wrapped
    elif output_dir is not None:
        cfg = cfg.model_copy(update={"output_dir": str(output_dir)})
    preflight(cfg, path=config)  # what the run would refuse, refused before anything is written
    from biorab.runner.checks.validate import config_warnings

    for note in config_warnings(cfg):
        err.print(f"[yellow]warning:[/yellow] {note}")
    try:
        with _ray_for(cfg, no_ray), _progress(err) if err.is_terminal else _ProgressLines() as bar:
            result = run_experiment(cfg, executor=_executor(no_ray), resume=resume, progress=bar)
    except Stopped as stop:
        raise exit_stopped(stop) from None
    if result.total_pending == 0:
        err.print("nothing to compute: every instance is already on disk (use --fresh to start over)")
    stats = result.stats
    err.print(f"generated {stats.generated}, from cache {stats.generation_cache_hits}, "
              f"failed {stats.generation_failures} (failed rows are retried by the next run)")
    if stats.probe_generated or stats.probe_cache_hits:
        err.print(f"awareness probes: generated {stats.probe_generated}, from cache {stats.probe_cache_hits}")
    out = Console()
    if not out.is_terminal:  # piped or logged: don't fold the table into 80 columns
        out = Console(width=160)
    out.print(_table(result))
    for source in experiment_sources():
        if source.name in result.sections:
            typer.echo(source.console_summary(result.sections[source.name]))
    typer.echo(f"outputs: {result.run_dir}")
    if result.tracking_uri:
        from biorab.tracking.experiment import parent_key
        from biorab.tracking.ui_link import browse_lines

        key = parent_key("run", cfg.name, result.run_dir)
        for line in browse_lines(result.tracking_uri, cfg.tracking.experiment or cfg.name, key):
            typer.echo(line)
    # wall time from config load to the table, start-up (Ray, model load) included: what a user waits for
    typer.echo(f"wall time: {time.perf_counter() - started:.1f} s")
    _exit_if_incomplete(result)


def _exit_if_incomplete(result: Any) -> None:
    """Failed rows make a run incomplete: its numbers are not scores, and the status says so (3)."""
    from biorab.cli.support.exit_codes import INCOMPLETE

    cells = [c for c in result.cells if c.incomplete]
    if cells:
        failed = sum(c.generation_failures for c in cells)
        typer.secho(f"incomplete: {failed} row(s) failed in {len(cells)} cell(s); their metrics are not "
                    "scores (not logged to MLflow); run the same command again to retry the failed rows",
                    fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(INCOMPLETE)


def _load(config: Path, *, data_dir: Path | None, fetch: bool, backend: str | None, err: Any) -> Any:
    """The checked config, after fetching the data it needs when this machine has none."""
    from biorab.common.config_loading import load_config
    from biorab.experiment import BackendSpec, ExperimentConfig
    from biorab.runner.checks.validate import check_experiment, load_experiment

    if fetch and data_dir is None:
        _fetch_for(load_config(ExperimentConfig, config), err)
    if backend is None:
        return load_experiment(config, data_dir=data_dir)
    cfg = load_experiment(config, data_dir=data_dir, check_data=False)
    cfg = cfg.model_copy(update={"backend": BackendSpec(name=backend)})
    check_experiment(cfg, path=config)
    return cfg


def _fetch_for(cfg: Any, err: Any) -> None:
    from biorab.common.errors import DataError
    from biorab.common.paths import fetched_data_dir
    from biorab.fetching import fetch_files, load_manifest
    from biorab.fetching.progress import FetchProgress
    from biorab.runner.checks.fetch_needs import names_to_fetch

    mirror = os.environ.get("BIORAB_DATA_MIRROR")
    names = names_to_fetch(cfg)
    if not names:
        return
    root = fetched_data_dir()
    err.print(f"no data for {', '.join(names)} on this machine: fetching into {root} "
              f"(from {mirror or 'the pinned public sources'}; --no-fetch to fail instead)", highlight=False)
    files = load_manifest().select(tuple(names))
    report = fetch_files(files, root, mirror=mirror, progress=FetchProgress(sys.stderr, tty=err.is_terminal))
    if report.failed:
        listed = "; ".join(f"{path}: {why}" for path, why in report.failed.items())
        raise DataError(f"could not fetch {len(report.failed)} file(s): {listed}; rerun to resume, or "
                        "run `biorab data fetch` with --mirror URL|DIR")


class _ProgressLines:
    """Plain ``progress: 40/96 rows (42%), 3.1 rows/s, eta 18s`` lines on stderr when it is not a terminal
    (``ray job logs``, CI): every 10 s, also while a long batch is still running, and at the end."""

    def __init__(self) -> None:
        import threading

        from biorab.common.progress_lines import ProgressLines

        self.lines = ProgressLines("rows", write=lambda line: print(line, file=sys.stderr, flush=True))
        self.stop = threading.Event()
        self.heartbeat = threading.Thread(target=self._beat, daemon=True)

    def _beat(self) -> None:
        while not self.stop.wait(1.0):
            self.lines.tick()

    def __enter__(self) -> _ProgressLines:
        self.heartbeat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.heartbeat.join()
        self.lines.finish()

    def __call__(self, advance: int, total: int) -> None:
        self.lines(advance, total)


@contextlib.contextmanager
def _ray_for(cfg: Any, no_ray: bool) -> Iterator[None]:
    """Ray started (or joined) here rather than inside the executor, so that the stop handlers are
    installed again after `ray.init` replaced SIGTERM's (exit 15 and a native stack dump)."""
    if no_ray:
        yield
        return
    import ray

    from biorab.cli.support.stop_signals import install_stop_handlers
    from pipelines.ray_setup import init_ray

    started = init_ray(cfg.resources)
    install_stop_handlers()
    try:
        yield
    finally:
        if started:
            ray.shutdown()


def _executor(no_ray: bool) -> Any:
    """The edge chooses the executor: in-process, or the Ray Data pipeline (imported only here)."""
    if no_ray:
        from biorab.runner.executors.local import LocalExecutor

        return LocalExecutor()
    from pipelines.ray_executor import RayExecutor

    return RayExecutor()


class _progress:
    """A rich bar (done/total, rate, ETA) driven by the runner's ``progress(advance, total)`` callback."""

    def __init__(self, console: Any) -> None:
        from biorab.cli.support.progress_bar import progress_bar

        self.bar = progress_bar(console, "[bold]instances")
        self.task = self.bar.add_task("run", total=None, rate="")
        self.done, self.start = 0, time.monotonic()

    def __enter__(self) -> _progress:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def __call__(self, advance: int, total: int) -> None:
        # The rate is over the whole run (rich's windowed speed jumps with the large, rare batches).
        self.done += advance
        elapsed = time.monotonic() - self.start
        self.bar.update(self.task, total=total, advance=advance, rate=f"{self.done / elapsed:.2f}/s")


def _table(result: Any) -> Any:
    """One row per cell: its headline metric with CI (the full set is in report.md and MLflow)."""
    from rich.table import Table

    from biorab.runner.scoring.cell_metrics import AWARENESS_METRICS
    from biorab.runner.scoring.run_report import metric_cell
    from biorab.tasks import PRIMARY_METRIC

    table = Table(title="headline metric per cell (95% bootstrap CI); all metrics: report.md / MLflow")
    for col in ("cell", "task", "n", "metric", "value [CI]", "parse fail", "gen fail"):
        table.add_column(col, overflow="fold")
    for cell in result.cells:
        name = PRIMARY_METRIC.get(cell.plan.task, next(iter(cell.metrics), ""))
        # Probing cells also show both negative-awareness rates (Testbed 4's headline numbers).
        names = [name] + [m for m in AWARENESS_METRICS if m in cell.metrics]
        for metric in names:
            value = metric_cell(cell.metrics[metric]) if metric in cell.metrics else "n/a"
            value = f"incomplete: {value}" if cell.incomplete else value
            table.add_row(cell.plan.label, cell.plan.task, str(cell.n), metric, value,
                          str(cell.parse_failures), str(cell.generation_failures))
    return table


def register(app: typer.Typer) -> None:
    app.command("run")(run)
