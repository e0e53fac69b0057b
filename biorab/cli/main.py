"""The `biorab` console script. Sub-commands live in one module each under `biorab.cli`; each module
exposes ``register(app)`` and imports its heavy dependencies only inside its commands."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import typer

from biorab.cli import exit_codes
from biorab.cli.flag_help import use_flag_help
from biorab.errors import BioRABError

# One module per command group; a missing module is skipped so the CLI keeps working while parts land.
COMMAND_MODULES: tuple[str, ...] = (
    "data",
    "score",
    "retrieve",
    "models",
    "run",
    "components",
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
    # The edge, not the library, sets the environment (called from `main` only, never on import):
    # fail fast instead of ~70 s of hub retries, and keep third-party telemetry off by default.
    for key, value in {
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "disabled",  # a local Ray 2.60 would otherwise write $HOME/.ray/auth_token
        "MLFLOW_DISABLE_TELEMETRY": "true",
        "DO_NOT_TRACK": "true",
        "TOKENIZERS_PARALLELISM": "false",
        "RAY_DATA_LOG_LEVEL": "WARNING",  # Ray Data logs every execution plan at INFO
        "MLFLOW_LOGGING_LEVEL": "WARNING",  # and MLflow every schema migration of a new store
        # An unreachable tracking server fails in seconds, not after minutes of retries (the results are
        # on disk first; `biorab track RUN_DIR` logs them later).
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "1",
        "MLFLOW_HTTP_REQUEST_TIMEOUT": "20",
        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
        # torch's OpenMP threads sleep instead of spinning while they wait for each other. On a busy
        # 2-core machine a spinning thread burns its peer's time slice: the smoke job in-process took
        # 232 s at load 3 with spinning and 50 s without; on the idle machine 47.6 s and 46.9 s, with
        # identical outputs (docs/pipeline.md). Read once, when torch loads OpenMP: set before any
        # import of torch, and inherited by a local Ray's workers.
        "OMP_WAIT_POLICY": "PASSIVE",
    }.items():
        os.environ.setdefault(key, value)


_register_commands()
use_flag_help(app)  # flags show no `<bool>` value to type in any --help


def main() -> None:
    """Entry point: runs the Typer app and turns errors into a one-line message and an exit status
    (`biorab.cli.exit_codes`): 2 for bad input, disks and stores, 130 for an interrupt."""
    _quiet_defaults()
    try:
        # In non-standalone mode typer *returns* the status of `typer.Exit(n)` and of Ctrl-C (130, from
        # its own KeyboardInterrupt handler) instead of exiting, so the return value must be honoured.
        status = app(standalone_mode=False)
    except KeyboardInterrupt:  # raised outside typer's handler (e.g. while a command tears down)
        status = exit_codes.INTERRUPTED
    except BioRABError as e:
        from biorab.runner.store.run_lock import RunLockedError

        locked = isinstance(e, RunLockedError)
        _fail(f"error: {e}", exit_codes.LOCKED if locked else exit_codes.USAGE_OR_INPUT)
    except OSError as e:
        from biorab.cli.os_errors import describe_os_error

        _fail(f"error: {describe_os_error(e)}", exit_codes.USAGE_OR_INPUT)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        _fail("aborted", exit_codes.INTERRUPTED)
    except Exception as e:  # click usage errors arrive here in non-standalone mode
        import click

        # typer >= 0.29 vendors click as `typer._click`: its usage errors are not `click.ClickException`
        usage_error = isinstance(e, typer.TyperException) and hasattr(e, "show")
        if isinstance(e, click.ClickException) or usage_error:
            shown: Any = e
            shown.show()
            sys.exit(shown.exit_code)
        raise
    if status == exit_codes.INTERRUPTED:
        _fail(exit_codes.INTERRUPT_MESSAGE, exit_codes.INTERRUPTED)
    sys.exit(status if isinstance(status, int) else exit_codes.OK)


def _fail(message: str, status: int) -> None:
    typer.secho(message, fg=typer.colors.RED, err=True)
    sys.exit(status)


if __name__ == "__main__":
    main()
