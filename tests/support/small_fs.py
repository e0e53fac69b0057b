"""Real small or read-only filesystems for disk-error tests: a tmpfs mount when running as root; without
root a read-only folder is made with chmod (a full disk then cannot be made, and the test says so)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(target: Path, options: str) -> bool:
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    return done.returncode == 0


@contextmanager
def small_fs(target: Path, size: str = "2m") -> Iterator[Path]:
    """A tmpfs of `size` at `target` (skips the test when it cannot be mounted: it needs root)."""
    target.mkdir(parents=True, exist_ok=True)
    if not _mount(target, f"size={size}"):
        pytest.skip("a real full filesystem needs a tmpfs mount (root); see docs/reliability.md")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


@contextmanager
def read_only_dir(target: Path) -> Iterator[Path]:
    """A folder nobody can write: a read-only tmpfs as root, else a chmod 555 folder."""
    target.mkdir(parents=True, exist_ok=True)
    if _mount(target, "size=64k,ro"):
        try:
            yield target
        finally:
            subprocess.run(["umount", "-l", str(target)], check=False)
        return
    target.chmod(0o555)
    try:
        yield target
    finally:
        target.chmod(0o755)


def fill(fs: Path) -> Path:
    """Write a filler file until the filesystem is full; returns it (delete it to free the space)."""
    filler = fs / "filler.bin"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)  # unbuffered: no flush to fail at close
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError:
                continue  # full at this size: try smaller pieces
    finally:
        os.close(fd)
    return filler
