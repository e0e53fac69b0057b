"""The options that the ``biorab data`` commands share (`biorab.cli.data` and `biorab.cli.data_leakage`):
in a module of their own, so the group, which registers its commands' modules, is imported by none of them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DataDirOption = Annotated[
    Path | None,
    typer.Option(
        "--data-dir", help="BioRAB data root (default: $BIORAB_DATA_DIR, else ../shared/data/biorab)."
    ),
]
