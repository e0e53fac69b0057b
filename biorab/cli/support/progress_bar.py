"""The rich progress bar `biorab run` and `biorab sweep` draw on a terminal: done/total, rate, ETA."""

from __future__ import annotations

from typing import Any


def progress_bar(console: Any, description: str = "{task.description}") -> Any:
    """A `rich.progress.Progress` whose tasks show `description`, a bar, done/total, their ``rate`` field,
    the time elapsed and the ETA (rich is imported here, on a terminal only)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(TextColumn(description), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"),
                    TimeRemainingColumn(), console=console, transient=False)
