"""SIGKILL a `biorab run` on local Ray (driver, raylet, GCS and workers together) while it writes, then
start it again: every instance exactly once, same predictions and metrics as an uninterrupted run."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from biorab.runner.store.shards import read_all_rows
from tests.support.run_outputs import outputs

REPO = Path(__file__).resolve().parents[2]
N = 12

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]


@pytest.fixture
def ray_temp() -> Iterator[str]:
    """A short Ray temp dir of our own; afterwards, kill (by pid) any process still using it."""
    path = tempfile.mkdtemp(prefix="rbk", dir="/tmp")
    yield path
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if path in cmdline:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGKILL)
    shutil.rmtree(path, ignore_errors=True)


def write_config(tmp_path: Path, data_dir: Path, name: str, ray_temp: str) -> Path:
    cfg = {
        "name": name, "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "medmcqa", "limit": N}],
        "retrieval": [{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25"}],
        "backend": {"name": "fake", "params": {"mode": "choice", "delay_s": 0.5}},
        "sampling": {"max_tokens": 4}, "n_boot": 100, "tracking": {"enabled": False},
        "resources": {"llm": {"batch_size": 2}, "retrieval": {"batch_size": 2}, "temp_dir": ray_temp},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def start(config: Path, cache: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BIORAB_CACHE_DIR": str(cache)}
    log = open(config.with_suffix(f".{time.monotonic_ns()}.log"), "wb")  # noqa: SIM115 (a pipe could fill up)
    cmd = [sys.executable, "-m", "biorab.cli.main", "run", str(config), *extra]
    return subprocess.Popen(cmd, env=env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def log_of(config: Path) -> str:
    logs = sorted(config.parent.glob(f"{config.stem}.*.log"))
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in logs)


def test_kill_nine_of_a_ray_run_then_resume(tmp_path: Path, data_dir: Path, ray_temp: str) -> None:
    reference = start(write_config(tmp_path, data_dir, "reference", ray_temp), tmp_path / "c1", "--no-ray")
    assert reference.wait(120) == 0
    config = write_config(tmp_path, data_dir, "killed", ray_temp)
    run_dir = tmp_path / "runs" / "killed"
    proc = start(config, tmp_path / "c2")
    deadline = time.monotonic() + 180
    while len(list(run_dir.glob("cells/*/part-*.parquet"))) < 3 and time.monotonic() < deadline:
        assert proc.poll() is None, log_of(config)
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver and the Ray processes it started (same session)
    proc.wait(30)
    written = sum(len(read_all_rows(d)) for d in (run_dir / "cells").iterdir())
    assert 0 < written < 2 * N, "the kill must land in the middle of the run"
    final = start(config, tmp_path / "c2")
    assert final.wait(240) == 0, log_of(config)
    for cell_dir in (run_dir / "cells").iterdir():
        ids = [r["id"] for r in read_all_rows(cell_dir)]
        assert len(ids) == len(set(ids)) == N
    assert outputs(run_dir) == outputs(tmp_path / "runs" / "reference")
