"""The `biorab` console script. Sub-commands live in one module each under `biorab.cli`; each module
exposes ``register(app)`` and imports its heavy dependencies only inside its commands."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import typer

from biorab.errors import BioRABError

# One module per command group; a missing module is skipped so the CLI keeps working while parts land.
COMMAND_MODULES: tuple[str, ...] = (
    "data",
    "score",
    "retrieve",
    "models",
    "run",
    "catalog",
    "drugmech",
    "serve",
    "tune",
    "sweep",
)

app = typer.Typer(
    name="biorab",
    help="Benchmark, harden and serve retrieval-augmented LLMs in biomedicine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"biorab.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"biorab.cli.{name}":
                continue
            raise
        module.register(app)


def _quiet_defaults() -> None:
    # Fail fast instead of ~70 s of hub retries, and keep third-party telemetry off by default.
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAY_USAGE_STATS_ENABLED": "0",
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "TOKENIZERS_PARALLELISM": "false",
        "RAY_DATA_LOG_LEVEL": "WARNING",  # Ray Data logs every execution plan at INFO
        "MLFLOW_LOGGING_LEVEL": "WARNING",  # and MLflow every schema migration of a new store
    }.items():
        os.environ.setdefault(key, value)


_register_commands()


def main() -> None:
    """Entry point: runs the Typer app and turns BioRAB errors into a message and exit code 2."""
    _quiet_defaults()
    try:
        app(standalone_mode=False)
    except BioRABError as e:
        typer.secho(f"error: {e}", fg=typer.colors.RED, err=True)
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        typer.secho("aborted", err=True)
        sys.exit(130)
    except Exception as e:  # click usage errors arrive here in non-standalone mode
        import click

        # typer >= 0.29 vendors click as `typer._click`: its usage errors are not `click.ClickException`
        usage_error = isinstance(e, typer.TyperException) and hasattr(e, "show")
        if isinstance(e, click.ClickException) or usage_error:
            shown: Any = e
            shown.show()
            sys.exit(shown.exit_code)
        raise


if __name__ == "__main__":
    main()
