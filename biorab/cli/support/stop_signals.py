"""SIGTERM (a scheduler's preemption) and Ctrl-C end a long command (`biorab sweep`, `biorab run`) the same
way: the main thread gets `Stopped`, a `KeyboardInterrupt`, so every cleanup that handles Ctrl-C (MLflow
runs closed, locks released, Ray shut down) runs for SIGTERM too, and `main` prints one line and exits
130 (SIGINT) or 143 (SIGTERM), as shells report 128 + the signal.

Ray's driver installs a native handler that dumps the stack on SIGTERM (exit 15 and a stack dump): the
handlers are installed again after Ray starts (`install_stop_handlers` is idempotent).
"""

from __future__ import annotations

import signal
from types import FrameType


class Stopped(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM or SIGINT; `exit_code` is 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def _on_signal(signum: int, frame: FrameType | None) -> None:
    # a second signal while the first one's cleanup runs must not cut it short
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise Stopped(signum)


def install_stop_handlers() -> None:
    """Route SIGTERM and SIGINT to `Stopped` in the main thread (call again after `ray.init`)."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_signal)


def exit_stopped(stop: Stopped) -> SystemExit:
    """Print the one line a stop ends with; returns the `SystemExit` to raise (130 or 143)."""
    import typer

    from biorab.cli.support.exit_codes import INTERRUPT_MESSAGE

    # Ctrl-C keeps the message it always had; SIGTERM says what stopped it, then the same
    line = INTERRUPT_MESSAGE if stop.signum == signal.SIGINT else \
        INTERRUPT_MESSAGE.replace("interrupted:", f"stopped by {signal.Signals(stop.signum).name}:", 1)
    typer.secho(line, fg=typer.colors.RED, err=True)
    return SystemExit(stop.exit_code)
