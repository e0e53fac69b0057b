"""`biorab explore RUN_DIR|SWEEP_DIR`: the static explorer of every instance, every cell side by side
(`biorab.explorer`), written beside the outputs and logged on the run's (or sweep's) MLflow parent run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

ARTIFACT_PATH = "explorer"


def explore(
    folder: Annotated[Path, typer.Argument(help="a run's output folder (biorab run) or a sweep's (biorab "
                                           "sweep)")],
    out: Annotated[Path | None, typer.Option("--out", help="write here instead of FOLDER/explorer")] = None,
    track: Annotated[bool, typer.Option("--track/--no-track", metavar="",
                                        help="log the explorer on the MLflow parent run")] = True,
) -> None:
    """Write a static explorer (index.html and its data files) that opens from disk with no server and
    no network: instances with filters (dataset, cell, right/wrong, misled, helped/hurt, leaked evidence,
    parse failure, the probe's verdict), cells chosen by their axes, a matrix of instances x cells, every
    cell of one instance side by side or as a sortable, groupable table, a pinned baseline cell, and the
    view in the URL. Prints its path."""
    from biorab.explorer import write_explorer

    build = write_explorer(folder, out=out)
    typer.echo(f"{build.instances} instances, {build.rows} rows, {build.cells} cells "
              f"({build.attributed_cells} with evidence attribution), {build.index_chunks} index and "
              f"{build.detail_chunks} detail chunks in {build.seconds:.1f} s", err=True)
    if build.skipped_cells:
        typer.echo(f"left out {build.skipped_cells} cells without dataset instances (DrugMech)", err=True)
    if track:
        run_id = _log(folder.expanduser().resolve(), build.index_html.parent)
        typer.echo(f"logged on MLflow run {run_id} as {ARTIFACT_PATH}/" if run_id else
                   "not logged to MLflow: tracking is off, or the store holds no parent run of this folder",
                   err=True)
    typer.echo(str(build.index_html))


def _log(folder: Path, explorer: Path) -> str | None:
    """Log on the parent run of the run (``config.yaml``) or sweep (``sweep.yaml``) in `folder`."""
    from biorab.common.config_loading import load_config
    from biorab.experiment import ExperimentConfig
    from biorab.sweep.config import load_sweep
    from biorab.tracking.experiment import parent_key
    from biorab.tracking.folder_artifacts import log_folder_on_parent
    from biorab.tracking.preflight import resolve_uri

    if (folder / "sweep.yaml").is_file():
        sweep = load_sweep(folder / "sweep.yaml")
        kind, name, tracking = "sweep", sweep.name, sweep.tracking
    elif (folder / "config.yaml").is_file():
        config = load_config(ExperimentConfig, folder / "config.yaml")
        kind, name, tracking = "run", config.name, config.tracking
    else:
        return None
    if not tracking.enabled:
        return None
    uri = resolve_uri(tracking.uri, folder)
    return log_folder_on_parent(uri, tracking.experiment or name, parent_key(kind, name, folder), explorer,
                                ARTIFACT_PATH)


def register(app: typer.Typer) -> None:
    app.command("explore")(explore)
