"""Plain-text progress lines for logs: what a rich bar shows, as lines that survive a pipe.

A bar redraws one terminal line, so ``ray job logs --follow`` or a CI log shows nothing until the end.
When the output is not a terminal, the CLI reports with `ProgressLines` instead: one line every
`every_s` seconds or `every_n` units, whichever comes first, and one at the end.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: Seconds before a rate means anything (see `ProgressLines.line`).
MIN_RATE_S = 1.0


class ProgressLines:
    """``progress: 40/96 rows (42%), 3.1 rows/s, eta 18s``, driven like the runner's progress callback.

    >>> clock = iter([0.0, 5.0, 10.0]).__next__
    >>> out = []
    >>> p = ProgressLines("rows", write=out.append, every_s=10.0, clock=clock)
    >>> p(31, 96); p(9, 96)
    >>> out
    ['progress: 40/96 rows (42%), 4.0 rows/s, eta 14s']
    """

    def __init__(
        self,
        unit: str,
        *,
        write: Callable[[str], None],
        every_s: float = 10.0,
        every_n: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        label: str = "progress",
    ) -> None:
        self.unit, self.write, self.every_s, self.every_n = unit, write, every_s, every_n
        self.clock, self.label = clock, label
        self.start = clock()
        self.done, self.total = 0, 0
        self._last_t, self._last_n = self.start, 0
        self._done_at: float | None = None  # when the count reached the total
        self._lock = threading.Lock()  # `tick` may come from a heartbeat thread

    def __call__(self, advance: int, total: int | None = None) -> None:
        """Count `advance` more units (of `total`, when known) and write a line when one is due."""
        with self._lock:
            self.done += advance
            self.total = total or self.total
            now = self.clock()
            if self._done_at is None and self.total and self.done >= self.total:
                self._done_at = now
            due_n = self.every_n is not None and self.done - self._last_n >= self.every_n
            if due_n or now - self._last_t >= self.every_s or (self.total and self.done >= self.total):
                self._emit(now)

    def tick(self) -> None:
        """Write a line if none was written for `every_s` (a long batch still shows the run is alive)."""
        with self._lock:
            now = self.clock()
            if now - self._last_t >= self.every_s:
                self._emit(now)

    def finish(self) -> None:
        """Write the last line, unless the latest one already shows the final count."""
        with self._lock:
            if self.done != self._last_n:  # nothing counted at all (nothing to compute): no line
                self._emit(self.clock())

    def _emit(self, now: float) -> None:
        self.write(self.line(now))
        self._last_t, self._last_n = now, self.done

    def line(self, now: float) -> str:
        """The line for the current count at time `now`. Within `MIN_RATE_S` of the start no rate is
        shown: units counted at once (a cell served from the cache) have no rate, and dividing by a few
        microseconds printed "17,889,087.7 rows/s". Once every unit is counted the rate is the one of that
        moment, and a later line (a heartbeat while the caller scores and logs) says how long ago that was:
        the rate kept falling with the clock ("80000/80000 rows (100%), 412.3 rows/s" and lower)."""
        if self._done_at is not None and now > self._done_at:
            done_line = self.line(self._done_at)
            since = round(now - self._done_at)
            return f"{done_line}; finishing for {since}s" if since else done_line
        elapsed = max(now - self.start, 1e-9)
        rate = self.done / elapsed
        if not self.total:
            return f"{self.label}: {self.done} {self.unit} after {round(elapsed)}s"
        pct = round(100 * self.done / self.total)
        if elapsed < MIN_RATE_S and self.done:
            return f"{self.label}: {self.done}/{self.total} {self.unit} ({pct}%) at once"
        eta = f", eta {round((self.total - self.done) / rate)}s" if rate > 0 else ""
        return f"{self.label}: {self.done}/{self.total} {self.unit} ({pct}%), {rate:.1f} {self.unit}/s{eta}"
