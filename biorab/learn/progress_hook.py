"""The one seam between a trainer and whatever watches it (Ray Train/Tune, a test, the benchmark).

A trainer calls ``report(metrics, checkpoint)`` after steps: `metrics` are floats (``step``, ``loss``...),
`checkpoint` a folder holding everything needed to resume (or ``None``). The Ray layer turns it into
``ray.train.report``; tests collect the calls in a list.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

Report = Callable[[dict[str, float], Path | None], None]


def null_report(metrics: dict[str, float], checkpoint: Path | None) -> None:
    """A report that drops everything (plain library use)."""
    del metrics, checkpoint
