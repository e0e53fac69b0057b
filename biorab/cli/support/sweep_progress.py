"""`biorab sweep`'s progress, per model and per cell (rows done, rate, ETA), as `biorab run` shows it: rich
bars on a terminal, plain lines elsewhere (``ray job logs``, CI), with a line at least every 10 s while a
model loads or a long batch runs. Both implement `biorab.sweep.run.SweepProgress`."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from biorab.common.progress_lines import MIN_RATE_S, ProgressLines

HEARTBEAT_S = 10.0


class SweepLines:
    """Plain lines: ``model smollm2: 40/96 rows (42%), 3.1 rows/s, eta 18s`` and, for each cell that
    writes rows, ``  cell ade_corpus_v2-test__none__noexample: 4/16 rows (25%), 1.0 rows/s, eta 12s``."""

    def __init__(self, write: Callable[[str], None] | None = None, *, every_s: float = HEARTBEAT_S) -> None:
        self.write = write or (lambda line: print(line, file=sys.stderr, flush=True))
        self.every_s = every_s
        self.model: ProgressLines | None = None
        self.cell_lines: dict[str, ProgressLines] = {}
        self._totals: dict[str, tuple[str, int]] = {}  # cell id -> (label, rows pending)
        self._stop = threading.Event()
        self._beat = threading.Thread(target=self._heartbeat, name="biorab-sweep-progress", daemon=True)

    def __enter__(self) -> SweepLines:
        self._beat.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._beat.join()

    def _heartbeat(self) -> None:
        while not self._stop.wait(min(1.0, self.every_s)):
            model = self.model
            if model is not None:
                model.tick()

    def start_model(self, model: str, cells: int) -> None:
        self.cell_lines, self._totals = {}, {}
        self.model = ProgressLines("rows", write=self.write, every_s=self.every_s, label=f"model {model}")

    def cells(self, slices: list[Any]) -> Callable[[Mapping[str, int]], None]:
        self._totals = {s.plan.cell_id: (s.plan.label, len(s.pending)) for s in slices}
        return self._cell_rows

    def _cell_rows(self, counts: Mapping[str, int]) -> None:
        for cell_id, n in counts.items():
            if cell_id not in self._totals:
                continue
            label, total = self._totals[cell_id]
            lines = self.cell_lines.get(cell_id)
            if lines is None:  # the cell starts now: its rate counts from here
                lines = self.cell_lines[cell_id] = ProgressLines(
                    "rows", write=self.write, every_s=self.every_s, label=f"  cell {label}")
            if n > 0:
                lines(n, total)

    def rows(self, advance: int, total: int) -> None:
        if self.model is not None:
            self.model(advance, total)

    def end_model(self) -> None:
        for lines in self.cell_lines.values():
            lines.finish()
        if self.model is not None:
            self.model.finish()
        self.model = None


class SweepBars:
    """Rich bars on a terminal: one per model's run, one per cell as it starts."""

    def __init__(self, console: Any) -> None:
        from biorab.cli.support.progress_bar import progress_bar

        self.bar = progress_bar(console)
        self.model_task: Any = None
        self._cells: dict[str, tuple[str, int]] = {}
        self._cell_tasks: dict[str, Any] = {}
        self._started: dict[Any, tuple[float, int]] = {}  # task -> (start time, rows done)

    def __enter__(self) -> SweepBars:
        self.bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def start_model(self, model: str, cells: int) -> None:
        self.model_task = self.bar.add_task(f"[bold]model {model}[/bold] ({cells} cells)", total=None,
                                            rate="")
        self._started[self.model_task] = (time.monotonic(), 0)
        self._cells, self._cell_tasks = {}, {}

    def cells(self, slices: list[Any]) -> Callable[[Mapping[str, int]], None]:
        self._cells = {s.plan.cell_id: (s.plan.label, len(s.pending)) for s in slices}
        return self._cell_rows

    def _cell_rows(self, counts: Mapping[str, int]) -> None:
        for cell_id, n in counts.items():
            if cell_id not in self._cells:
                continue
            task = self._cell_tasks.get(cell_id)
            if task is None:
                label, total = self._cells[cell_id]
                task = self._cell_tasks[cell_id] = self.bar.add_task(f"  {label}", total=total, rate="")
                self._started[task] = (time.monotonic(), 0)
            self._advance(task, n, None)

    def rows(self, advance: int, total: int) -> None:
        if self.model_task is not None:
            self._advance(self.model_task, advance, total)

    def _advance(self, task: Any, n: int, total: int | None) -> None:
        # The rate is over the task's whole life (rich's windowed speed jumps with large, rare batches).
        start, done = self._started[task]
        done += n
        self._started[task] = (start, done)
        elapsed = time.monotonic() - start
        rate = f"{done / elapsed:.2f}/s" if elapsed >= MIN_RATE_S else "at once"  # no µs-rates (cache hits)
        if total is None:
            self.bar.update(task, advance=n, rate=rate)
        else:
            self.bar.update(task, advance=n, total=total, rate=rate)

    def end_model(self) -> None:
        self.model_task = None
