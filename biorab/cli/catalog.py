"""`biorab ls <kind>` (what is registered) and `biorab validate <config.yaml>` (check before running)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from biorab.errors import ConfigError


def _kind(kind: str) -> str:
    from biorab.registry import ALL_REGISTRIES

    for candidate in (kind, f"{kind}s", kind.rstrip("s") + "s"):
        if candidate in ALL_REGISTRIES:
            return candidate
    raise ConfigError(f"unknown kind {kind!r}; choose one of: {', '.join(ALL_REGISTRIES)}", key="kind")


KIND_HELP = "datasets, tasks, parsers, metrics, corpora, retrievers or backends"


def ls(kind: Annotated[str, typer.Argument(help=KIND_HELP)]) -> None:
    """List the registered components of one kind, one name per line."""
    from biorab.registry import ALL_REGISTRIES

    for name in ALL_REGISTRIES[_kind(kind)].names():
        typer.echo(name)


def validate(
    config: Annotated[Path, typer.Argument(help="experiment YAML")],
    skip_data: Annotated[bool, typer.Option("--skip-data", help="skip the split check on disk")] = False,
    skip_tracking: Annotated[bool, typer.Option("--skip-tracking", help="do not contact the tracking "
                                                "server")] = False,
) -> None:
    """Check an experiment config (keys, names, component params, splits, a tracking server answering
    within 3 s) and list its cells."""
    from biorab.runner.validate import load_experiment

    cfg = load_experiment(config, check_data=not skip_data)
    if cfg.tracking.enabled and not skip_tracking:
        from biorab.tracking.preflight import check_server, resolve_uri

        check_server(resolve_uri(cfg.tracking.uri, cfg.run_dir()))
    cells = cfg.cells()
    typer.echo(f"ok: {config} defines {len(cells)} cell(s); outputs go to {cfg.run_dir()}")
    for cell in cells:
        limit = cell.dataset.limit if cell.dataset.limit is not None else "all"
        typer.echo(f"  {cell.cell_id}  (limit {limit})")
    if cfg.drugmech is not None and skip_data:  # listing them needs the query files (their types)
        n = len(cfg.drugmech.query_files)
        typer.echo(f"and the DrugMech cells of {n} query file(s) (not listed with --skip-data)")
    elif cfg.drugmech is not None:
        from biorab.runner.drugmech_plan import drugmech_cells

        dm = drugmech_cells(cfg)
        limit = cfg.drugmech.limit if cfg.drugmech.limit is not None else "all"
        typer.echo(f"and {len(dm)} DrugMech cell(s) (query file × world/mode × run, limit {limit}):")
        for _loaded, plan in dm:
            typer.echo(f"  {plan.cell_id}")


def register(app: typer.Typer) -> None:
    app.command("ls")(ls)
    app.command("validate")(validate)
