"""SIGKILL a real `biorab run` at several points, start it again: every instance exactly once, and the
same predictions and metrics as an uninterrupted run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from biorab.runner.store.shards import read_all_rows
from tests.support.run_outputs import outputs

REPO = Path(__file__).resolve().parents[2]
N = 10  # instances per dataset; 2 datasets, batches of 2 → 10 shards of ~0.4 s each


def write_config(tmp_path: Path, data_dir: Path, name: str) -> Path:
    cfg = {
        "name": name,
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}, {"name": "semclass", "limit": N}],
        "retrieval": [{"testbed": "none"}],
        "backend": {"name": "fake", "params": {"mode": "choice", "delay_s": 0.4}},
        "sampling": {"max_tokens": 4},
        "n_boot": 100,
        "resources": {"llm": {"batch_size": 2}},
        "tracking": {"enabled": False},
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def biorab(config: Path, cache: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BIORAB_CACHE_DIR": str(cache)}
    return subprocess.Popen([sys.executable, "-m", "biorab.cli.main", "run", str(config), "--no-ray"],
                            env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def shard_count(run_dir: Path) -> int:
    return len(list(run_dir.glob("cells/*/part-*.parquet")))


def kill_after(config: Path, cache: Path, run_dir: Path, shards: int) -> None:
    proc = biorab(config, cache)
    deadline = time.monotonic() + 120
    while shard_count(run_dir) < shards and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"




@pytest.mark.slow
@pytest.mark.timeout(300)
def test_kill_nine_then_resume_is_exactly_once(tmp_path: Path, data_dir: Path) -> None:
    reference = write_config(tmp_path, data_dir, "reference")
    ref = biorab(reference, tmp_path / "cache-ref")
    assert ref.wait(120) == 0, ref.stderr.read() if ref.stderr else ""
    config = write_config(tmp_path, data_dir, "killed")
    run_dir = tmp_path / "runs" / "killed"
    for shards in (1, 4, 7):  # kill early, in the middle and late; each restart continues the same run
        kill_after(config, tmp_path / "cache", run_dir, shards)
    final = biorab(config, tmp_path / "cache")
    out, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    for cell_dir in (run_dir / "cells").iterdir():
        ids = [r["id"] for r in read_all_rows(cell_dir)]
        assert len(ids) == len(set(ids)) == N  # no failed attempts here, so exactly one row per instance
    assert outputs(run_dir) == outputs(tmp_path / "runs" / "reference")
