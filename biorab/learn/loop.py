"""The step loop both trainers share: train a step, report its loss, and every `checkpoint_every` steps
(and at the end) evaluate, save a resumable checkpoint and report it.

A checkpoint folder holds the trainer's model files (written by `save_model`) plus ``state.pt`` (step,
optimizer and scheduler state); `load_state` resumes from it. Batches are a function of the step
(`biorab.learn.batching`), so a resumed run continues with the batches the killed one would have used.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.common.errors import BioRABError
from biorab.learn.progress_hook import Report

STATE_FILE = "state.pt"


@dataclass
class LoopResult:
    """What a finished loop did: last step, per-step losses (this run only) and the last evaluation."""

    step: int
    losses: list[float] = field(default_factory=list)
    eval_metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class Loop:
    """One training loop (see the module docstring).

    Attributes:
        train_step: step index -> the step's training loss (it does forward, backward and the update).
        evaluate: -> held-out metrics (``eval_loss``...).
        save_model: folder -> writes the model files of a checkpoint into it.
        optimizer, scheduler: their state travels in the checkpoint.
    """

    train_step: Callable[[int], float]
    evaluate: Callable[[], dict[str, float]]
    save_model: Callable[[Path], None]
    optimizer: Any
    scheduler: Any = None
    seed: int = 0

    def run(self, *, max_steps: int, checkpoint_every: int, report: Report, start: int = 0) -> LoopResult:
        result = LoopResult(step=start)
        for step in range(start, max_steps):
            loss = self._seeded_step(step)
            if not math.isfinite(loss):
                raise BioRABError(f"training loss is {loss} at step {step + 1}; lower the learning rate")
            result.losses.append(loss)
            result.step = step + 1
            metrics = {"step": float(step + 1), "loss": loss}
            if (step + 1) % checkpoint_every == 0 or step + 1 == max_steps:
                result.eval_metrics = self.evaluate()
                metrics.update(result.eval_metrics)
                with tempfile.TemporaryDirectory(prefix="biorab-ckpt-") as tmp:
                    self.save(Path(tmp), step + 1)
                    report(metrics, Path(tmp))
            else:
                report(metrics, None)
        return result

    def _seeded_step(self, step: int) -> float:
        """One step with the torch RNG (dropout) seeded by (seed, step), restored afterwards: a run is
        reproducible, a resumed one draws what the uninterrupted one drew, the caller's RNG is untouched."""
        import torch

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed * 1_000_003 + step)
            return self.train_step(step)

    def save(self, folder: Path, step: int) -> None:
        import torch

        self.save_model(folder)
        state = {
            "step": step,
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict() if self.scheduler is not None else None,
        }
        torch.save(state, folder / STATE_FILE)

    def load_state(self, folder: Path) -> int:
        """Restore optimizer and scheduler from a checkpoint; returns the step to continue from."""
        import torch

        state = torch.load(folder / STATE_FILE, weights_only=False)
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None and state["scheduler"] is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        return int(state["step"])
