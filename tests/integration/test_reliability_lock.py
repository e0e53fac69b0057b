"""Two real `biorab run` processes on one output directory: the second refuses at once, naming the holder;
a holder killed with SIGKILL leaves nothing stuck."""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from pathlib import Path

import pytest

from biorab.runner.store.shards import read_all_rows
from tests.support.cli_runs import biorab, shard_count, start, write_config

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

# Slow enough (5 more batches of 3 s after the first shard) that the holder is still running while the
# second process starts, even on a loaded machine.
SLOW = {"backend": {"name": "fake", "params": {"mode": "choice", "delay_s": 3.0}},
        "datasets": [{"name": "semclass", "limit": 12}]}


def wait_for_shard(proc: object, run_dir: Path) -> None:
    deadline = time.monotonic() + 120
    while shard_count(run_dir) < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert shard_count(run_dir) >= 1


@pytest.mark.timeout(300)
def test_second_concurrent_run_refuses_naming_the_holder(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir, **SLOW)
    run_dir = tmp_path / "runs" / "rel"
    first = start("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    wait_for_shard(first, run_dir)
    second = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache2", timeout=60)
    assert second.returncode == 4, second.stderr
    assert first.poll() is None, "the first run ended before the second was refused"
    line = second.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {run_dir / '.biorab.lock'}: another run is using {run_dir}")
    assert f"(pid {first.pid} on host {socket.gethostname()}, started 20" in line
    assert first.wait(120) == 0
    rows = [r for d in (run_dir / "cells").iterdir() for r in read_all_rows(d)]
    assert sorted(r["id"] for r in rows) == sorted(f"semclass/test/{i}" for i in range(12))  # computed once
    assert json.loads((run_dir / ".biorab.lock").read_text())["pid"] == first.pid


@pytest.mark.timeout(300)
def test_lock_of_a_killed_run_is_not_stuck(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir, **SLOW)
    run_dir = tmp_path / "runs" / "rel"
    first = start("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    wait_for_shard(first, run_dir)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait(30)
    again = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache", timeout=120)
    assert again.returncode == 0, again.stderr
