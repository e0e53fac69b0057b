"""The `biorab` console script. Sub-commands live in one module each under `biorab.cli`; each module
exposes ``register(app)`` and imports its heavy dependencies only inside its commands."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import typer

from biorab.cli.support import exit_codes
from biorab.cli.support.flag_help import use_flag_help
from biorab.cli.support.process_env import apply_process_env_defaults
from biorab.common.errors import BioRABError

# One module per command group. A group that cannot load (a missing file, a missing dependency: a broken
# install) must not vanish from the CLI: `main()` fails naming the module and its import error.
COMMAND_MODULES: tuple[str, ...] = (
    "data",
    "score",
    "retrieve",
    "models",
    "run",
    "components",
    "drugmech",
    "serve",
    "replay",
    "tune",
    "sweep",
    "explore",
)

app = typer.Typer(
    name="biorab",
    help="Benchmark, harden and serve retrieval-augmented LLMs in biomedicine.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


#: The command groups that could not be imported: module name → its import error.
LOAD_ERRORS: dict[str, ImportError] = {}


def _register_commands() -> None:
    # Import errors are kept, not raised here: at import time (the console script imports this module
    # before `main()` runs) they would end in a traceback rather than a one-line error and exit status.
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"biorab.cli.{name}")
        except ImportError as e:
            LOAD_ERRORS[f"biorab.cli.{name}"] = e
            continue
        module.register(app)


def load_error_message() -> str:
    """One line per command group that could not load, naming its module and import error."""
    return "\n".join(f"error: the command group in {module} cannot load: {type(e).__name__}: {e}; the "
                     "install is broken (reinstall with install.sh)" for module, e in LOAD_ERRORS.items())


_register_commands()
use_flag_help(app)  # flags show no `<bool>` value to type in any --help


def main() -> None:
    """Entry point: runs the Typer app and turns errors into a one-line message and an exit status
    (`biorab.cli.support.exit_codes`): 2 for bad input, disks and stores, 130 for an interrupt."""
    apply_process_env_defaults()
    if LOAD_ERRORS:
        _fail(load_error_message(), exit_codes.BROKEN_INSTALL)
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
        from biorab.cli.support.os_errors import describe_os_error

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
