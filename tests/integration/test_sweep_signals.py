"""SIGTERM (a scheduler's preemption) and Ctrl-C end `biorab sweep` and `biorab run` with one line and exit
143 / 130, every MLflow run closed (none left RUNNING), and the same command resumes to exit 0. On Ray,
SIGTERM used to end the sweep with exit 15 and a native stack dump from Ray's own handler."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
STOP_LINE = {"SIGTERM": "stopped by SIGTERM: the rows written so far are kept; run the same command again",
             "SIGINT": "interrupted: the rows written so far are kept; run the same command again"}


def write_sweep(tmp_path: Path) -> Path:
    sweep = {"name": "sig", "output_dir": str(tmp_path / "runs"),
             "models": {"slow": {"backend": "fake", "params": {"mode": "constraint", "delay_s": 0.4}}},
             "matrix": {"models": ["slow"], "datasets": [{"name": "medmcqa", "limit": 6},
                                                         {"name": "ade", "limit": 6}],
                        "retrievers": ["none", "bm25"]},
             "resources": {"llm": {"batch_size": 1}}, "n_boot": 20, "tracking": {"experiment": "sig"}}
    path = tmp_path / "sig.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path


def write_run(tmp_path: Path) -> Path:
    run = {"name": "sigrun", "output_dir": str(tmp_path / "runs"),
           "datasets": [{"name": "medmcqa", "limit": 8}], "retrieval": [{"testbed": "none"}],
           "backend": {"name": "fake", "params": {"mode": "constraint", "delay_s": 0.4}},
           "resources": {"llm": {"batch_size": 1}}, "n_boot": 20}
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(run), encoding="utf-8")
    return path


def stop_after_rows(args: list[str], folder: Path, signum: int, env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-m", "biorab.cli.main", *args], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not list(folder.glob("**/cells/*/part-*.parquet")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()[1][-3000:]
        time.sleep(0.1)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def statuses(db: Path, experiment: str) -> list[str]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    found = client.get_experiment_by_name(experiment)
    assert found is not None
    return [r.info.status for r in client.search_runs([found.experiment_id], max_results=100)]


def resumed(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "signum", "code"), [("--ray", signal.SIGTERM, 143),
                                                      ("--no-ray", signal.SIGINT, 130)])
def test_sweep_stops_with_one_line_and_resumes(tmp_path: Path, mode: str, signum: int, code: int) -> None:
    path = write_sweep(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}  # the sweep dir's store
    env["BIORAB_CACHE_DIR"] = str(tmp_path / "cache")
    returncode, err = stop_after_rows(["sweep", str(path), mode], tmp_path / "runs", signum, env)
    assert returncode == code, err[-3000:]
    assert STOP_LINE[signal.Signals(signum).name] in err
    assert "Traceback" not in err and "Fatal Python error" not in err and "*** SIG" not in err
    db = tmp_path / "runs" / "sig" / "mlflow.db"
    stopped = statuses(db, "sig")
    assert stopped and "RUNNING" not in stopped and "KILLED" in stopped  # parent and started children
    done = resumed(["sweep", str(path), mode], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(statuses(db, "sig")) == {"FINISHED"}


@pytest.mark.slow
def test_run_stops_on_sigterm_and_resumes(tmp_path: Path) -> None:
    path = write_run(tmp_path)
    env = dict(os.environ)
    returncode, err = stop_after_rows(["run", str(path), "--no-ray"], tmp_path / "runs", signal.SIGTERM, env)
    assert returncode == 143, err[-3000:]
    assert STOP_LINE["SIGTERM"] in err and "Traceback" not in err
    done = resumed(["run", str(path), "--no-ray"], env)
    assert done.returncode == 0, done.stderr[-3000:]
