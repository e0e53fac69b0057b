"""``biorab data fetch``: download the public datasets (or copy them from a mirror), verified by sha256."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def fetch(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="biorab, drugmechdb, drugmechcf or a BioRAB dataset (ade, medmcqa, ...); "
                            "default: all three groups"),
    ] = None,
    mirror: Annotated[
        str | None,
        typer.Option("--mirror", envvar="BIORAB_DATA_MIRROR",
                     help="URL or folder laid out like the data folder (biorab/..., drugmechdb/..., "
                          "drugmechcf/...) to fetch from instead of the public sources"),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="data folder to fill (default: ~/.local/share/biorab/data, "
                                        "found by every command without options)"),
    ] = None,
) -> None:
    """Download DrugMechDB, the DrugMech release and the BioRAB datasets from their pinned public sources,
    check every file's sha256, rebuild the derived files, and report what failed (exit code 2)."""
    from biorab.common.errors import DataError
    from biorab.common.paths import fetched_data_dir
    from biorab.fetching import fetch_files, load_manifest
    from biorab.fetching.progress import FetchProgress

    root = (data_dir or fetched_data_dir()).expanduser()
    files = load_manifest().select(tuple(names or ("biorab", "drugmechdb", "drugmechcf")))
    typer.echo(f"data folder: {root}")
    typer.echo(f"source: {mirror or 'the pinned public sources (docs/datasets.md, Fetching the data)'}")
    progress = FetchProgress(sys.stdout, tty=sys.stdout.isatty())
    report = fetch_files(files, root, mirror=mirror, progress=progress)
    typer.echo(f"{len(report.installed)} installed, {len(report.present)} already present and verified, "
               f"{len(report.failed)} failed")
    if data_dir is not None and not report.failed:
        typer.echo(f"use it with: --data-dir {root / 'biorab'} (or BIORAB_DATA_DIR, BIORAB_DRUGMECHDB_DIR, "
                   "BIORAB_DRUGMECHCF_DIR)")
    for path, reason in report.failed.items():
        typer.secho(f"error: {path}: {reason}", fg=typer.colors.RED, err=True)
    if report.failed:
        # A BioRABError, so the CLI exits with code 2 (click swallows typer.Exit codes in our main).
        raise DataError(f"{len(report.failed)} of {len(files)} files failed (listed above); run the same "
                        "command again to resume, or pass --mirror URL|DIR")
