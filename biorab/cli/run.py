"""`biorab run <config.yaml>`: the RAL pipeline with a progress bar and a final metrics table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer


def run(
    config: Annotated[Path, typer.Argument(help="experiment YAML (see jobs/smoke.yaml)")],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="first N rows of each dataset")] = None,
    resume: Annotated[bool, typer.Option("--resume/--fresh", help="keep rows on disk, or start over")] = True,
    no_ray: Annotated[bool, typer.Option("--no-ray", help="run the same stages in-process")] = False,
    output_dir: Annotated[Path | None, typer.Option("--output-dir", help="override output_dir")] = None,
) -> None:
    """Run every (dataset × retrieval setting) cell of CONFIG, score it with CIs and track it in MLflow."""
    from rich.console import Console

    from biorab.runner import run_experiment
    from biorab.runner.validate import load_experiment

    started = time.perf_counter()
    cfg = load_experiment(config).with_limit(limit)
    if output_dir is not None:
        cfg = cfg.model_copy(update={"output_dir": str(output_dir)})
    err = Console(stderr=True)
    with _progress(err) as bar:
        result = run_experiment(cfg, resume=resume, use_ray=not no_ray, progress=bar)
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
    if result.drugmech is not None:
        _echo_drugmech(result.drugmech)
    typer.echo(f"outputs: {result.run_dir}")
    if result.tracking_uri:
        typer.echo(f"browse: mlflow ui --backend-store-uri {result.tracking_uri}")
    # wall time from config load to the table, start-up (Ray, model load) included: what a user waits for
    typer.echo(f"wall time: {time.perf_counter() - started:.1f} s")


class _progress:
    """A rich bar (done/total, rate, ETA) driven by the runner's ``progress(advance, total)`` callback."""

    def __init__(self, console: Any) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn("[bold]instances"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=console, transient=False,
        )
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

    from biorab.metrics.scoring import PRIMARY_METRIC
    from biorab.runner.report import metric_cell
    from biorab.runner.scoring import AWARENESS_METRICS

    table = Table(title="headline metric per cell (95% bootstrap CI); all metrics: report.md / MLflow")
    for col in ("cell", "task", "n", "metric", "value [CI]", "parse fail", "gen fail"):
        table.add_column(col, overflow="fold")
    for cell in result.cells:
        name = PRIMARY_METRIC.get(cell.plan.task, next(iter(cell.metrics), ""))
        # Probing cells also show both negative-awareness rates (Testbed 4's headline numbers).
        names = [name] + [m for m in AWARENESS_METRICS if m in cell.metrics]
        for metric in names:
            value = metric_cell(cell.metrics[metric]) if metric in cell.metrics else "n/a"
            table.add_row(cell.plan.label, cell.plan.task, str(cell.n), metric, value,
                          str(cell.parse_failures), str(cell.generation_failures))
    return table


def _echo_drugmech(report: dict[str, Any]) -> None:
    """DrugMech accuracy per query file × world/mode over runs (the groups' BCa CIs are in report.md)."""
    typer.echo(f"DrugMech (parser {report['parser']}, matcher {report['matcher']}): strict accuracy over "
               "runs, mean ± SD [90% CI]; groups with BCa CIs in report.md and summary.json")
    for c in report["cells"]:
        acc = c["accuracy_strict"]
        lo, hi = acc["ci_low"], acc["ci_high"]
        ci = "" if lo is None else f" ± {acc['std']:.3f} [{lo:.3f}, {hi:.3f}]"
        typer.echo(f"  {c['query_file']:<22} {c['world'] or c['mode']:<36} runs={c['runs']} n={c['n']} "
                   f"strict={acc['mean']:.3f}{ci} unparsed={c['n_unparsed']} incomplete={c['n_incomplete']}")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
