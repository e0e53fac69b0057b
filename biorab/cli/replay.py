"""`biorab replay RUN_DIR --endpoint URL`: a run's instances through a live endpoint, compared with the
rows on disk (`biorab.replay`). ``--write-serve-config`` writes a serve config that serves the run's cells
as named RALs (`biorab serve` it, then replay against it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer


def replay_command(
    run_dir: Annotated[Path, typer.Argument(help="a run dir (its config.yaml and cells/)")],
    endpoint: Annotated[str | None, typer.Option(
        "--endpoint", help="the server's base URL (e.g. http://127.0.0.1:8000)")] = None,
    cells: Annotated[list[str] | None, typer.Option(
        "--cells", help="replay only these cells (label or id; repeat the option)")] = None,
    api_key: Annotated[str | None, typer.Option(
        "--api-key", help="the server's API key (default: $BIORAB_API_KEY)")] = None,
    write_serve_config: Annotated[Path | None, typer.Option(
        "--write-serve-config", help="write a serve config serving the run's cells as RALs and exit")] = None,
    timeout_s: Annotated[float, typer.Option("--timeout", help="seconds per request")] = 600.0,
) -> None:
    """Send RUN_DIR's instances through a live endpoint and compare evidence, prompts, answers and verdicts
    with the rows the run scored: agreement rates per cell, and each difference with its cause, decided
    per field (config, unexplained, prompt, engine, adapter version, batch composition). Exit status 1
    when any differs."""
    from biorab import replay

    if write_serve_config is not None:
        import yaml

        config = replay.serve_config_of(run_dir, cells=cells or ())
        write_serve_config.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        typer.echo(f"wrote {write_serve_config}: {len(config['rals'])} RAL(s); biorab serve "
                   f"{write_serve_config}")
        return
    if endpoint is None:
        raise typer.BadParameter("give --endpoint URL (or --write-serve-config PATH)")
    from openai import OpenAI

    key = api_key or os.environ.get("BIORAB_API_KEY") or "none"
    client = OpenAI(base_url=endpoint.rstrip("/") + "/v1", api_key=key, max_retries=2, timeout=timeout_s)
    results = replay.replay(run_dir, client, cells=cells or ())
    typer.echo(replay.report(results))
    if any(r.differences or r.model is None for r in results):
        raise SystemExit(1)


def register(app: typer.Typer) -> None:
    app.command("replay")(replay_command)
