"""The MLflow SQLite store survives a SIGKILL at any moment of its creation, and a store that cannot be
opened never blocks the results: real subprocess runs, real kills, the real MLflow store read back."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli_runs import biorab, start, write_config

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


@pytest.fixture(autouse=True)
def run_dir_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the run dir's own store (``$MLFLOW_TRACKING_URI`` would take precedence)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)

TRACKED = {"tracking": {"enabled": True}, "datasets": [{"name": "semclass", "limit": 4},
                                                       {"name": "ade_corpus_v2", "limit": 4}]}


def store_files(run_dir: Path) -> list[Path]:
    return [*run_dir.glob("mlflow.db*"), *run_dir.glob(".mlflow.db*")] if run_dir.is_dir() else []


def mlflow_cells(run_dir: Path, experiment: str) -> dict[str, dict[str, float]]:
    """cell_id -> metrics of every active run of the experiment (one entry per run, checked unique)."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{run_dir / 'mlflow.db'}")
    exp = client.get_experiment_by_name(experiment)
    assert exp is not None
    every = client.search_runs([exp.experiment_id])
    runs = [r for r in every if "cell_id" in r.data.tags]  # the children; one parent run per `biorab run`
    assert len(every) - len(runs) == 1, "one parent run"
    cells = [r.data.tags["cell_id"] for r in runs]
    assert len(cells) == len(set(cells)), f"more than one MLflow run per cell: {sorted(cells)}"
    assert all(r.info.status == "FINISHED" for r in every)
    # the scores, without the live counter `rows_written`: it counts the rows written while the child was
    # open, so a run killed after computing (before its children opened) leaves the rerun nothing to count
    return {r.data.tags["cell_id"]: {k: v for k, v in r.data.metrics.items() if k != "rows_written"}
            for r in runs}


def kill_during_store_creation(proc: subprocess.Popen[str], run_dir: Path, delay: float) -> bool:
    """SIGKILL `delay` s after the first store file appears; False if the run ended first."""
    deadline = time.monotonic() + 120
    while not store_files(run_dir) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(delay)
    if proc.poll() is not None:
        return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    return True


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_kill_during_store_creation_then_rerun_one_run_per_cell(tmp_path: Path, data_dir: Path) -> None:
    cache = tmp_path / "cache"
    ref = biorab("run", str(write_config(tmp_path, data_dir, "ref", **TRACKED)), "--no-ray", cache=cache)
    assert ref.returncode == 0, ref.stderr
    reference = mlflow_cells(tmp_path / "runs" / "ref", "ref")
    assert len(reference) == 2
    killed = 0
    for i, delay in enumerate((0.0, 0.05, 0.2, 0.5, 1.0)):
        name = f"k{i}"
        cfg = write_config(tmp_path, data_dir, name, **TRACKED)
        run_dir = tmp_path / "runs" / name
        killed += kill_during_store_creation(start("run", str(cfg), "--no-ray", cache=cache), run_dir, delay)
        again = biorab("run", str(cfg), "--no-ray", cache=cache)
        assert again.returncode == 0, f"delay {delay}: {again.stderr[-2000:]}"
        got = mlflow_cells(run_dir, name)
        assert got == reference, f"delay {delay}"
        # a third run with nothing new logs nothing new: still one run per cell, same numbers
        assert biorab("run", str(cfg), "--no-ray", cache=cache).returncode == 0
        assert mlflow_cells(run_dir, name) == reference
    assert killed >= 3, "the runs finished before they could be killed during store creation"


def test_half_created_store_from_older_version_is_rebuilt(tmp_path: Path, data_dir: Path) -> None:
    """A store an in-place creation left half-migrated (no runs) is moved aside with a warning."""
    cfg = write_config(tmp_path, data_dir, **TRACKED)
    run_dir = tmp_path / "runs" / "rel"
    run_dir.mkdir(parents=True)
    with sqlite3.connect(run_dir / "mlflow.db") as conn:  # what a kill mid-migration leaves behind
        conn.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        conn.execute("INSERT INTO alembic_version VALUES ('451aebb31d03')")
        conn.execute("CREATE TABLE _alembic_tmp_latest_metrics (x INTEGER)")
        conn.execute("CREATE TABLE runs (run_uuid VARCHAR(32))")
    out = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    assert "creation was interrupted" in out.stderr
    assert len(list(run_dir.glob("mlflow.db.incomplete-*"))) == 1
    assert len(mlflow_cells(run_dir, "rel")) == 2


def test_corrupt_store_never_blocks_results(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir, **TRACKED)
    run_dir = tmp_path / "runs" / "rel"
    run_dir.mkdir(parents=True)
    (run_dir / "mlflow.db").write_bytes(b"this is not a database" * 100)
    out = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {run_dir / 'mlflow.db'}: not a usable MLflow store")
    assert f"mv {run_dir / 'mlflow.db'}" in line and "Traceback" not in out.stderr
    assert (run_dir / "summary.json").is_file() and (run_dir / "report.md").is_file()
    assert len(list((run_dir / "predictions").glob("*.parquet"))) == 2
