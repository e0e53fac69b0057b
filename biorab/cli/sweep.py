"""`biorab plan`, `biorab sweep`, `biorab report` and `biorab track`: a sweep config from plan to tables."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

SweepArg = Annotated[Path, typer.Argument(help="sweep YAML (see jobs/sweep_smoke.yaml, jobs/paper.yaml)")]


def plan(
    config: Annotated[Path, typer.Argument(help="sweep YAML (jobs/paper.yaml) or run config "
                                           "(jobs/drugmech_paper.yaml)")],
    as_json: Annotated[bool, typer.Option("--json", help="print the plan as JSON")] = False,
    skip_data: Annotated[bool, typer.Option("--skip-data", help="skip the splits check")] = False,
    cells: Annotated[bool, typer.Option("--cells", help="list a sweep's cells too (a run config's cells are "
                                        "always listed)")] = False,
) -> None:
    """Cells, unique retrieval and generation keys (after dedupe and against the caches), tokens and
    GPU-hours of CONFIG, and every config error, in seconds and without a GPU. A run config's cells are
    listed by id with their rows and prompt tokens; a sweep's with --cells."""
    from biorab.common.config_loading import read_yaml, validate_mapping
    from biorab.common.errors import ConfigError
    from biorab.experiment import ExperimentConfig
    from biorab.sweep import load_sweep
    from biorab.sweep.config import is_run_config
    from biorab.sweep.cost_estimate import plan_experiment, plan_sweep

    data = read_yaml(config)
    kind = "run" if is_run_config(data) else "sweep"
    if kind == "run":
        run = validate_mapping(ExperimentConfig, data, path=config)
        result = plan_experiment(run, path=config, check_data=not skip_data)
    else:
        result = plan_sweep(load_sweep(config), path=config, check_data=not skip_data, list_cells=cells)
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    else:
        _print_plan(result, kind)
        if result.cell_estimates is not None:
            _print_cells(result.cell_estimates)
    if result.errors:
        raise ConfigError(f"{len(result.errors)} config error(s) found before launch (listed above)",
                          path=config)


def _print_cells(cells: list[Any]) -> None:
    """Every planned cell, run by run: its id (as `biorab validate` lists it), rows and prompt tokens."""
    by_run: dict[tuple[str, str], list[Any]] = {}
    for c in cells:
        by_run.setdefault((c.model, c.run), []).append(c)
    for (model, run), listed in by_run.items():
        typer.echo(f"cells of run {run} (model {model}): {len(listed)}")
        for c in listed:
            estimated = f", {c.estimated_rows} prompts estimated" if c.estimated_rows else ""
            mark = "" if c.tokens_exact else "~"
            typer.echo(f"  {c.cell}  {c.rows} rows{estimated}, {mark}{c.prompt_tokens:,} prompt tokens")


def _print_plan(p: Any, kind: str = "sweep") -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from biorab.sweep.cost_estimate import DECODE_BASES

    runs = f" in {p.runs} runs" if kind == "sweep" else ""
    table = Table(title=f"{kind} {p.sweep}: {p.cells} cells{runs} (planned in {p.seconds:.2f} s)")
    for col in ("model", "backend", "cells", "gen keys", "new gens", "estimated", "prompt tok (new)",
                "decode tok (new)", "GPU-h", "cost $", "throughput"):
        table.add_column(col)
    for m in p.models:
        mark, how = "" if m.tokens_exact else "~", DECODE_BASES[m.decode_basis]
        table.add_row(escape(m.model), m.backend, str(m.cells), str(m.unique_generation_keys),
                      str(m.new_generations),
                      str(m.estimated_prompts), f"{mark}{m.new_prompt_tokens:,}",
                      f"{how}{m.new_decode_tokens:,}", f"{m.gpu_hours:.2f}",
                      "-" if m.cost_usd is None else f"{how}{m.cost_usd:,.2f}", m.throughput)
    out = Console(width=160)
    out.print(table)
    priced = {DECODE_BASES[m.decode_basis] for m in p.models if m.cost_usd is not None}
    total = "≤" if priced == {"≤"} else "~" if priced == {"~"} else "≈"
    out.print(f"retrieval keys: {p.unique_retrieval_keys:,} unique, {p.new_retrieval_keys:,} not cached; "
              f"generation keys: {p.unique_generation_keys:,} unique, {p.new_generations:,} new "
              f"({p.estimated_prompts:,} with estimated prompts); GPU-hours ({p.gpu}): {p.gpu_hours:.2f}"
              + ("" if p.cost_usd is None else f"; API cost {total} ${p.cost_usd:,.2f} (the config's prices"
                 + ("" if total == "≤" else "; per model: bound ≤, estimate ~, assumption ?") + ")"))
    out.print(f"retrieval indexes: {p.indexes} (corpus x retriever), each built once for the whole sweep "
              f"and reused by every later run; {p.encoded_indexes} embed their corpus (dense): "
              f"{p.index_items:,} items, ~{p.index_tokens:,} tokens, ≤ {p.index_gpu_hours:.3f} GPU-hours "
              f"({p.gpu}; not in the GPU-hours above); the others (BM25) are built on CPUs")
    out.print("~ prompt tokens estimated from length (no tokenizer here). Decode tokens per answer: "
              + "; ".join(_DECODE_TEXT[b] for b in dict.fromkeys(m.decode_basis for m in p.models)))
    for m in p.models:
        if m.reasoning_note:
            out.print(escape(f"{m.model}: {m.reasoning_note}"))  # "[effort=high]" is not markup
    for err in p.errors:
        out.print(f"[red]error:[/red] {err}")


_DECODE_TEXT = {
    "max_tokens": "≤ bound by max_tokens (sent with every request), plus the thinking budget where set",
    "measured_mean": "~ estimate, the mean a finished run of the model measured",
    "max_output": "≤ bound by the model's maximum output (max_output_tokens; no limit is sent)",
    "assumed_max_tokens": "? max_tokens assumed, not a bound: no limit is sent and the model's maximum is "
                          "unknown (set max_output_tokens)",
}


def sweep(
    sweep: SweepArg,
    resume: Annotated[bool, typer.Option("--resume/--fresh", help="keep rows on disk, or start over")] = True,
    no_ray: Annotated[bool, typer.Option("--no-ray/--ray", metavar="",
        help="run the same stages in-process")] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="first N rows of each dataset")] = None,
    output_dir: Annotated[Path | None, typer.Option("--output-dir", help="override output_dir (with "
                                                    "--rehearse: the rehearsal's root, default "
                                                    "runs/rehearsal)")] = None,
    rehearse: Annotated[bool, typer.Option("--rehearse", help="every cell on this machine: models -> the "
                                           "fake engine, GPUs -> local CPUs, tracking -> a local store, "
                                           "encoders that cannot load -> MiniLM (each printed)")] = False,
) -> None:
    """Run every cell of SWEEP in one Ray job, model by model; resumable like `biorab run`. Shows rows
    done, rate and ETA per model and per cell, and ends with the sweep's table. Every problem of the grid
    (models, adapters, encoders, data files, templates, resources) is listed before anything starts (exit
    2). SIGTERM and Ctrl-C stop it with one line (exit 143 / 130), every MLflow run closed; rerun to
    resume."""
    from biorab.cli.support.stop_signals import Stopped, exit_stopped, install_stop_handlers
    from biorab.sweep import load_sweep
    from biorab.sweep.run import prepare_sweep

    install_stop_handlers()
    cfg = load_sweep(sweep)
    subs: list[Any] = []
    if rehearse:
        from biorab.sweep.rehearsal import rehearse as rehearsed

        use_rehearsal_cache()
        real = cfg
        cfg, subs = rehearsed(cfg, output_dir=output_dir)
        for sub in subs:
            typer.echo(sub.line(), err=True)
    elif output_dir is not None:
        cfg = cfg.model_copy(update={"output_dir": str(output_dir)})
    runs = prepare_sweep(cfg, path=sweep, limit=limit)  # every problem, before Ray or any actor starts
    if rehearse:
        from biorab.sweep.rehearsal import write_rehearsal_file

        cfg.sweep_dir().mkdir(parents=True, exist_ok=True)
        write_rehearsal_file(cfg.sweep_dir(), subs, None)
    try:
        result = _run(cfg, sweep, runs, no_ray=no_ray, resume=resume, limit=limit)
    except Stopped as stop:
        raise exit_stopped(stop) from None
    if rehearse:
        _finish_rehearsal(real, sweep, cfg, result, subs)
    if result.tracking_error:
        from biorab.common.errors import TrackingError

        raise TrackingError(result.tracking_error)


def use_rehearsal_cache() -> None:
    """Point this process at the rehearsal's cache namespace, before anything reads a cache and before a
    local Ray starts (its workers inherit the environment): nothing a rehearsal writes is read back by a
    real run."""
    import os

    from biorab.sweep.rehearsal import rehearsal_cache_dir

    os.environ["BIORAB_CACHE_DIR"] = str(rehearsal_cache_dir())


def _run(cfg: Any, path: Path, runs: list[Any], *, no_ray: bool, resume: bool, limit: int | None) -> Any:
    """The sweep itself, its summary lines and table; a BioRAB error raised in a Ray worker comes out as
    itself (one line, exit 2)."""
    from rich.console import Console

    from biorab.cli.support.ray_errors import biorab_cause
    from biorab.cli.support.sweep_progress import SweepBars, SweepLines
    from biorab.sweep.run import run_sweep

    start = time.monotonic()
    err = Console(stderr=True)
    try:
        shown_as = SweepBars(err) if err.is_terminal else SweepLines()
        with _one_ray(cfg, no_ray) as executor_for, shown_as as shown:
            result = run_sweep(cfg, path=path, resume=resume, executor_for=executor_for, limit=limit,
                               echo=lambda m: typer.echo(m, err=True), progress=shown, runs=runs)
    except Exception as e:
        cause = biorab_cause(e)
        if cause is None:
            raise
        raise cause from None
    typer.echo(f"sweep {cfg.name}: {result.cells} cells in {len(result.runs)} runs, generated "
               f"{result.generated}, from cache {result.cache_hits}, failed {result.failures}, "
               f"{time.monotonic() - start:.1f} s")
    typer.echo(f"outputs: {result.sweep_dir}")
    if result.tracking_uri:
        from biorab.tracking.experiment import parent_key
        from biorab.tracking.ui_link import browse_lines

        key = parent_key("sweep", cfg.name, result.sweep_dir)
        for line in browse_lines(result.tracking_uri, cfg.tracking.experiment or cfg.name, key):
            typer.echo(line)
    _print_table(cfg, path)
    return result


def _finish_rehearsal(real: Any, path: Path, cfg: Any, result: Any, subs: list[Any]) -> None:
    """What the real sweep would need (the planner on the real config), printed and kept in
    ``rehearsal.json``; each run's summary.json marked as a rehearsal."""
    from biorab.sweep.rehearsal import mark_summaries, real_sweep_needs, write_rehearsal_file

    mark_summaries([r.run_dir for r in result.runs], subs)
    needs = real_sweep_needs(real, path=path, rehearsal_dir=result.sweep_dir)
    file = write_rehearsal_file(result.sweep_dir, subs, needs)
    tokens = "measured with each model's tokenizer" if needs["tokens_exact"] else "estimated from length"
    typer.echo(f"the real sweep would need: {needs['cells']} cells, {needs['rows']:,} rows, "
               f"{needs['prompt_tokens']:,} prompt tokens ({tokens}), about {needs['disk_bytes'] / 1e9:.2f} "
               f"GB of outputs (this rehearsal's, scaled to every row), {needs['gpu_hours']:.2f} GPU-hours "
               f"({needs['gpu']}, the planner's); details: {file}")
    for sub in subs:
        typer.echo(sub.line())
    typer.echo(f"report: biorab report {result.sweep_dir / 'sweep.yaml'}; explorer: biorab explore "
               f"{result.sweep_dir}")


def _print_table(cfg: Any, path: Path) -> None:
    """The sweep's tables as the report has them (headline metric x100 with its CI per cell); the report
    is written now when the sweep was not tracked (a tracked sweep wrote it while finishing)."""
    from biorab.sweep.report import write_report

    report = cfg.sweep_dir() / "report" / "report.md"
    if not cfg.tracking.enabled or not report.is_file():
        write_report(cfg, path=path, track=False)
    typer.echo("\n".join(line for line in report.read_text(encoding="utf-8").splitlines()
                          if not line.startswith("![")))


@contextlib.contextmanager
def _one_ray(cfg: Any, no_ray: bool) -> Iterator[Any]:
    """The edge picks the executor: in-process, or one Ray for the whole sweep (each run's
    `RayExecutor` joins it and leaves it up)."""
    if no_ray:
        yield None
        return
    import ray

    from biorab.cli.support.stop_signals import install_stop_handlers
    from biorab.runner.checks.launch import cluster_capacity, raise_if_problems, resource_problems
    from biorab.sweep.expand import expand_runs
    from pipelines.ray_executor import RayExecutor
    from pipelines.ray_setup import init_ray

    runs = expand_runs(cfg)
    started = init_ray(runs[0].config.resources) if runs else False
    install_stop_handlers()  # again: ray.init installs its own (a stack dump and exit 15 on SIGTERM)
    try:
        if ray.is_initialized():  # the cluster joined (or started): the pools must fit it, before any actor
            raise_if_problems(resource_problems([r.config.resources for r in runs], cluster_capacity()),
                              path=None)
        yield lambda _model: RayExecutor()
    finally:
        if started:
            ray.shutdown()


def report(
    sweep: SweepArg,
    track: Annotated[bool, typer.Option("--track/--no-track", help="log the report to MLflow")] = True,
) -> None:
    """The paper's tables (markdown + HTML, CIs, best marks, paired tests vs no retrieval) and plots."""
    from biorab.sweep import load_sweep
    from biorab.sweep.report import write_report

    cfg = load_sweep(sweep)
    written = write_report(cfg, path=sweep, track=track)
    for p in written:
        typer.echo(str(p))


def track(
    run_dir: Annotated[Path, typer.Argument(help="a run directory of `biorab run` or a sweep's output dir")],
    uri: Annotated[str | None, typer.Option("--uri", help="tracking URI instead of the config's")] = None,
) -> None:
    """Log finished results on disk to MLflow again (after an unreachable tracking server), no compute."""
    from biorab.cli.replay_tracking import track_dir

    uri = track_dir(run_dir, uri=uri)
    typer.echo(f"browse: mlflow ui --backend-store-uri {uri}")


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
    app.command("sweep")(sweep)
    app.command("report")(report)
    app.command("track")(track)
