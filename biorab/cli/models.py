"""`biorab models ...`: prepare (convert and cache) the CPU default model, and list models.

Only typer and light biorab modules are imported at the top; the conversion imports torch/transformers
inside the command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

models_app = typer.Typer(help="Prepare and list generator models.", no_args_is_help=True)

CacheDirOption = Annotated[
    Path | None,
    typer.Option("--cache-dir", help="Cache root (default $BIORAB_CACHE_DIR or ~/.cache/biorab)."),
]


@models_app.command("prepare")
def prepare(
    model: Annotated[str, typer.Option("--model", help="Model to prepare.")] = "smollm2",
    cache_dir: CacheDirOption = None,
    force: Annotated[bool, typer.Option("--force/--no-force", metavar="",
        help="Convert again even if already prepared.")] = False,
) -> None:
    """Convert MODEL's packaged GGUF once into bf16 safetensors under <cache>/models (atomic)."""
    from biorab.generation.prepare import prepare_model, read_marker

    def log(message: str) -> None:
        typer.echo(message, err=True)

    folder = prepare_model(model, cache_dir=cache_dir, force=force, log=log)
    marker = read_marker(folder) or {}
    typer.echo(f"{model}\t{folder}\tsha256:{marker.get('source_sha256', '?')}")


@models_app.command("ls")
def ls(
    cache_dir: CacheDirOption = None,
    as_json: Annotated[bool, typer.Option("--json/--no-json", metavar="",
        help="Print JSON instead of a table.")] = False,
) -> None:
    """List the known models (prepared or not) and every prepared folder in the cache."""
    from biorab.generation.model_catalog import list_models

    rows = list_models(cache_dir)
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in rows], indent=2))
        return
    typer.echo(f"{'NAME':<24} {'STATUS':<12} {'SIZE':>9}  PATH")
    for row in rows:
        status = "prepared" if row.prepared else "missing"
        size = f"{row.size_bytes / 2**20:.0f} MiB" if row.size_bytes else "-"
        typer.echo(f"{row.name:<24} {status:<12} {size:>9}  {row.path}")
    if not all(r.prepared for r in rows):
        typer.echo("run `biorab models prepare --model NAME` to prepare a missing model", err=True)


def register(app: typer.Typer) -> None:
    """Attach the `models` command group to the main app."""
    app.add_typer(models_app, name="models")
