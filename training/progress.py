"""A Tune callback that hands trial progress (trials by state, best metric so far) to a display."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ray.tune import Callback


class ProgressCallback(Callback):
    """Calls `show({"done", "running", "total", "best", "trial", "metrics"})` on every result and trial
    end."""

    def __init__(self, metric: str, mode: str, show: Callable[[dict[str, Any]], None]) -> None:
        self.metric, self.sign, self.show = metric, (1 if mode == "min" else -1), show
        self.best: float | None = None

    def on_trial_result(
        self, iteration: int, trials: list[Any], trial: Any, result: dict[str, Any], **info: Any
    ) -> None:
        value = result.get(self.metric)
        if value is not None and (self.best is None or self.sign * value < self.sign * self.best):
            self.best = float(value)
        self._emit(
            trials, trial.trial_id, {k: result[k] for k in ("step", "loss", self.metric) if k in result}
        )

    def on_trial_complete(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._emit(trials, trial.trial_id, {"state": "done"})

    def on_trial_error(self, iteration: int, trials: list[Any], trial: Any, **info: Any) -> None:
        self._emit(trials, trial.trial_id, {"state": "error"})

    def _emit(self, trials: list[Any], trial_id: str, metrics: dict[str, Any]) -> None:
        states = [t.status for t in trials]
        self.show(
            {
                "done": sum(s in ("TERMINATED", "ERROR") for s in states),
                "running": states.count("RUNNING"),
                "total": len(states),
                "best": self.best,
                "trial": trial_id,
                "metrics": metrics,
            }
        )


class LinePrinter:
    """Shows progress on stderr: one rewritten status line on a terminal, plain lines otherwise (logs,
    `ray job logs`). Picklable, because Tune stores its callbacks with the job for `Tuner.restore`."""

    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def __call__(self, info: dict[str, Any]) -> None:
        import sys

        best = "-" if info["best"] is None else f"{info['best']:.4f}"
        shown = " ".join(
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in info["metrics"].items()
        )
        line = (
            f"trials {info['done']}/{info['total']} done, {info['running']} running | best {best} | "
            f"{info['trial']} {shown}"
        )
        if self.tty:
            sys.stderr.write("\r\x1b[2K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
