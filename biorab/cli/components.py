"""`biorab ls <kind>` (what is registered) and `biorab validate <config.yaml>` (check before running)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from biorab.common.errors import ConfigError


def _kind(kind: str) -> str:
    from biorab.common.registry import ALL_REGISTRIES

    for candidate in (kind, f"{kind}s", kind.rstrip("s") + "s"):
        if candidate in ALL_REGISTRIES:
            return candidate
    raise ConfigError(f"unknown kind {kind!r}; choose one of: {', '.join(ALL_REGISTRIES)}", key="kind")


KIND_HELP = "datasets, tasks, parsers, metrics, corpora, retrievers or backends"


def ls(kind: Annotated[str, typer.Argument(help=KIND_HELP)]) -> None:
    """List the registered components of one kind, one name per line."""
    from biorab.common.registry import ALL_REGISTRIES

    for name in ALL_REGISTRIES[_kind(kind)].names():
        typer.echo(name)


def validate(
    config: Annotated[Path, typer.Argument(help="experiment or sweep YAML")],
    skip_data: Annotated[bool, typer.Option("--skip-data/--check-data", metavar="",
        help="skip the data checks on disk")] = False,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="BioRAB data root (overrides the "
                                                  "config's data_dir)")] = None,
    skip_tracking: Annotated[bool, typer.Option("--skip-tracking/--check-tracking", metavar="",
        help="do not contact the tracking server")] = False,
) -> None:
    """Check an experiment config (keys, names, component params, splits, data files, a tracking server
    answering within 3 s) and list its cells. A sweep file gets the checks `biorab sweep` makes before
    launch (every model, adapter and encoder loads here, data files, templates, resources), all problems
    listed at once."""
    from biorab.common.config_loading import read_yaml
    from biorab.runner.checks.preflight import preflight
    from biorab.sweep.config import is_run_config

    if not is_run_config(read_yaml(config)):
        _validate_sweep(config, check_data=not skip_data, data_dir=data_dir)
        return
    from biorab.runner.checks.validate import load_experiment
    from biorab.runner.plan.experiment_source import experiment_sources

    cfg = load_experiment(config, check_data=not skip_data, data_dir=data_dir)
    preflight(cfg, path=config, check_data=not skip_data)  # the same checks `biorab run` makes first
    if cfg.tracking.enabled and not skip_tracking:
        from biorab.tracking.preflight import check_server, resolve_uri

        check_server(resolve_uri(cfg.tracking.uri, cfg.run_dir()))
    listed, unlisted = [], []
    for source in experiment_sources():
        cells = source.cells(cfg, load_data=not skip_data)
        if cells is None:
            unlisted.append(source.name)
        else:
            listed += cells
    typer.echo(f"ok: {config} defines {len(listed)} cell(s); outputs go to {cfg.run_dir()}")
    from biorab.runner.checks.validate import config_warnings

    for note in config_warnings(cfg):
        typer.secho(f"warning: {note}", fg=typer.colors.YELLOW, err=True)
    for cell in listed:
        typer.echo(f"  {cell.cell_id}  (limit {cell.limit if cell.limit is not None else 'all'})")
    for name in unlisted:  # listing them needs their data (e.g. DrugMech query files: their types)
        typer.echo(f"and the {name} cells (not listed with --skip-data)")


def _validate_sweep(path: Path, *, check_data: bool, data_dir: Path | None) -> None:
    """A sweep's pre-launch checks (`biorab.runner.checks.launch`) on every run it expands into."""
    from biorab.runner.checks.launch import launch_problems, raise_if_problems
    from biorab.sweep import load_sweep
    from biorab.sweep.expand import expand_runs
    from biorab.sweep.run import launch_units

    cfg = load_sweep(path)
    if data_dir is not None:
        cfg = cfg.model_copy(update={"data_dir": str(data_dir)})
    runs = expand_runs(cfg, path=path)
    raise_if_problems(launch_problems(launch_units(runs), path=path, check_data=check_data), path=path)
    cells = sum(len(r.config.cells()) for r in runs)
    typer.echo(f"ok: {path} defines {cells} cell(s) in {len(runs)} run(s); outputs go to {cfg.sweep_dir()}")
    for run in runs:
        typer.echo(f"  run {run.config.name} (model {run.model}): {len(run.config.cells())} cell(s)")


def register(app: typer.Typer) -> None:
    app.command("ls")(ls)
    app.command("validate")(validate)
