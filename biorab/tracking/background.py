"""`BackgroundTracking`: a run's MLflow runs opened in a thread while the run's work starts up.

Opening the runs costs seconds that have nothing to do with the rows: MLflow's import, the SQLite store's
creation (its Alembic migrations) and the parent and child runs. Done first, they delayed every run by
that much; here they overlap the executor's own start-up (Ray, the actors, the model load), which leaves
the driver waiting anyway.

The thread starts at the executor's first progress call (``progress(0, total)``, made once its start-up is
under way and before its first batch; `biorab.runner.executors.Executor`), not before: by then the
executor has imported what it needs (Ray, Ray Data, pandas), and importing a package from two threads at
once can deadlock on Python's per-module import locks. An executor that never reports progress gets its
runs opened when the work is over, as does a run with nothing to compute.

What reaches MLflow is unchanged: progress reported before the runs are open is logged, summed, as soon
as they are, and `wait` logs what is left; cells that started before then get their child runs as soon as
the parent is open (`cell_rows`); results are logged after they are on disk, as before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping

from biorab.tracking.live import CellRowsFn, LiveTracking, ProgressFn


class BackgroundTracking:
    """Runs `open_runs` once (in a thread from the first progress call on) and hands its `LiveTracking`
    to the caller with `wait`.

    Args:
        open_runs: opens the parent run, e.g. ``lambda: start_run_tracking(config, run_dir)``.
        watch_cells: given the open runs, registers the cells and returns the callback that opens each
            cell's child as it starts (``biorab.tracking.experiment.watch_run_cells``); ``None``: no cells.
    """

    def __init__(self, open_runs: Callable[[], LiveTracking],
                 watch_cells: Callable[[LiveTracking], CellRowsFn] | None = None) -> None:
        self._open_runs = open_runs
        self._watch_cells = watch_cells
        self._watcher: CellRowsFn | None = None
        self._cell_counts: dict[str, int] = {}  # per-cell rows reported before the runs were open
        self._thread: threading.Thread | None = None
        self._tracking: LiveTracking | None = None
        self._error: BaseException | None = None
        self._report: ProgressFn | None = None
        self._unlogged = 0  # rows reported before the runs were open
        self._total = 0

    def _run(self) -> None:
        try:
            self._tracking = self._open_runs()
        except BaseException as e:  # handed to the caller by `wait`
            self._error = e

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="biorab-tracking", daemon=True)
            self._thread.start()

    def _ready(self) -> LiveTracking | None:
        thread = self._thread
        if thread is None or thread.is_alive() or self._tracking is None:
            return None
        return self._tracking

    def progress(self, inner: ProgressFn | None) -> ProgressFn:
        """A progress callback: calls `inner`, starts opening the runs on its first call, and logs rows
        written on the parent once the runs are open (`LiveTracking.progress`)."""

        def report(advance: int, total: int) -> None:
            self._start()
            if inner is not None:
                inner(advance, total)
            self._unlogged += advance
            self._total = total
            tracking = self._ready()
            if tracking is not None:
                self._flush(tracking)

        return report

    def cell_rows(self) -> CellRowsFn:
        """The executor's per-cell callback (`biorab.runner.executors.CellRowsFn`): counts are kept until
        the parent is open, then handed to the cells' watcher, which opens each started cell's child."""

        def report(counts: Mapping[str, int]) -> None:
            self._start()
            for cell_id, n in counts.items():
                self._cell_counts[cell_id] = self._cell_counts.get(cell_id, 0) + n
            tracking = self._ready()
            if tracking is not None:
                self._flush(tracking)

        return report

    def _flush(self, tracking: LiveTracking) -> None:
        if self._report is None:
            self._report = tracking.progress(None)
        if self._unlogged:
            advance, self._unlogged = self._unlogged, 0
            self._report(advance, self._total)
        if self._watch_cells is not None and self._watcher is None:
            self._watcher = self._watch_cells(tracking)
        if self._watcher is not None and self._cell_counts:
            counts, self._cell_counts = self._cell_counts, {}
            self._watcher(counts)

    def wait(self) -> LiveTracking:
        """The open runs (opened now if the thread never started); raises what opening them raised."""
        self._start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._tracking is not None
        self._flush(self._tracking)
        return self._tracking

    def fail(self) -> None:
        """End the runs as FAILED (the work raised); never raises, so the work's error stays the one seen."""
        with contextlib.suppress(Exception):  # the work's own exception is the one to report
            self.wait().fail()
