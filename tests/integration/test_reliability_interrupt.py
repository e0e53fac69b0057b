"""Ctrl-C (a real SIGINT to the process group, as a terminal sends it) ends `biorab run` with status 130
and a one-line message saying the run resumes; the resumed run then finishes every row exactly once."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from biorab.runner.store.shards import read_all_rows
from tests.support.cli_runs import biorab, shard_count, start, write_config

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


@pytest.mark.timeout(240)
def test_sigint_exits_130_with_resume_message_then_resumes(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir, backend={"name": "fake", "params": {"mode": "choice",
                                                                                "delay_s": 1.5}})
    run_dir = tmp_path / "runs" / "rel"
    proc = start("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    deadline = time.monotonic() + 120
    while shard_count(run_dir) < 1 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted:") and "run the same command again to resume" in last
    assert "Traceback" not in err
    done = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    rows = [r for d in (run_dir / "cells").iterdir() for r in read_all_rows(d)]
    assert sorted(r["id"] for r in rows) == [f"semclass/test/{i}" for i in range(6)]


def test_typer_exit_status_is_not_swallowed(tmp_path: Path) -> None:
    """`--help` exits 0 and a usage error 2: the status typer returns in non-standalone mode is honoured."""
    assert biorab("run", "--help", cache=tmp_path).returncode == 0
    assert biorab("run", cache=tmp_path).returncode == 2
