"""One `biorab run` at a time per output directory: an exclusive ``flock`` on ``<run dir>/.biorab.lock``.

Two runs of one config would otherwise both compute every pending row and race creating the MLflow store.
The kernel drops a ``flock`` when its holder dies (``kill -9`` included), so a killed run never leaves the
directory stuck; the file's text (pid, host, start time) only names the holder in the refusal message.
A ``flock`` is local to one host's kernel: on network filesystems that do not forward it (some NFS setups)
two hosts are not kept apart.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from biorab.common.errors import BioRABError

LOCK_NAME = ".biorab.lock"


class RunLockedError(BioRABError):
    """Another live process is running in the same output directory."""


def _holder(text: str) -> str:
    try:
        info = json.loads(text)
        return f"pid {info['pid']} on host {info['host']}, started {info['started']}"
    except (ValueError, KeyError, TypeError):
        return "a process that has not yet written its details"


@contextmanager
def run_lock(run_dir: Path, *, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the run directory's lock for the block; wait up to `wait_s` seconds for it, then refuse.

    Raises:
        RunLockedError: naming the holder (pid, host, start time) and the lock file.
    """
    path = run_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, path, wait_s)
        info = {"pid": os.getpid(), "host": socket.gethostname(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _acquire(fd: int, path: Path, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                holder = _holder(os.pread(fd, 4096, 0).decode("utf-8", "replace"))
                raise RunLockedError(
                    f"{path}: another run is using {path.parent} ({holder}); wait for it to finish, stop "
                    "it, or choose another --output-dir or run name") from None
            time.sleep(0.2)
