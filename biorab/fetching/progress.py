"""What `biorab data fetch` shows while it works: a redrawn line per file on a terminal, plain lines
(start, every 10 s, result) when the output is a pipe or a log."""

from __future__ import annotations

import time
from typing import TextIO


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


class FetchProgress:
    """Receives the fetch's events; writes nothing when `stream` is None (library use, tests)."""

    def __init__(self, stream: TextIO | None, *, tty: bool = False, every_s: float = 10.0) -> None:
        self.stream, self.tty, self.every_s = stream, tty, every_s
        self.path, self.done, self._last = "", 0, 0.0
        self.size_: int | None = None

    def _write(self, text: str, *, end: str = "\n") -> None:
        if self.stream is not None:
            self.stream.write(text + end)
            self.stream.flush()

    def start(self, path: str, size: int | None) -> None:
        """A download of `path` (`size` bytes when known) begins or resumes."""
        self.path, self.size_, self.done, self._last = path, size, 0, time.monotonic()
        if not self.tty:
            self._write(f"fetching {path}" + (f" ({_mb(size)})" if size else ""))

    def advance(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if self.tty:
            of = f"/{_mb(self.size_)}" if self.size_ else ""
            self._write(f"\r{self.path}: {_mb(self.done)}{of}", end="")
        elif now - self._last >= self.every_s:
            self._last = now
            self._write(f"  {self.path}: {_mb(self.done)} so far")

    def parts_start(self, path: str, *, todo: int, total: int, source: str, threads: int) -> None:
        """`path` is assembled from `total` small upstream files, `todo` of them not yet verified here."""
        self.path, self.size_, self.done, self._last = path, None, 0, time.monotonic()
        self._write(
            f"fetching {path}: {todo:,} of {total:,} upstream files from {source} "
            f"({threads} at a time; {total - todo:,} already here and verified)"
        )

    def parts_advance(self, done: int, todo: int) -> None:
        """`done` of the `todo` files are finished (verified or failed). Called from one thread only."""
        now = time.monotonic()
        if self.tty:
            self._write(f"\r{self.path}: {done:,}/{todo:,} files", end="")
        elif now - self._last >= self.every_s:
            self._last = now
            self._write(f"  {self.path}: {done:,}/{todo:,} files so far")

    def installed(self, path: str) -> None:
        self._write(("\r" if self.tty else "") + f"ok     {path}")

    def failed(self, path: str, reason: str) -> None:
        self._write(("\r" if self.tty else "") + f"FAILED {path}: {reason}")
