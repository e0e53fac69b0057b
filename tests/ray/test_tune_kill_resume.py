"""A two-trial PEFT tune job on local Ray (Ray Tune over Ray Train, tiny random-init Llama): an
uninterrupted job, and the same job SIGKILLed (a real subprocess, Ray processes included) after its first
trial finished, then resumed. The resumed job keeps the finished trial (its per-step loss history is not
logged twice), finds the same best trial, and MLflow holds the parent, both children (FINISHED) and the
registered adapter with alias ``best``, read back with `MlflowClient`."""

from __future__ import annotations

import contextlib
import json
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

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture
def ray_temp() -> Iterator[str]:
    """A short Ray temp dir of our own; afterwards, kill (by pid) any process still using it."""
    path = tempfile.mkdtemp(prefix="rtk", dir="/tmp")
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


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_causal_lm import build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")


def write_config(tmp_path: Path, name: str, tiny: Path, data_dir: Path, ray_temp: str) -> Path:
    cfg = {
        "name": name,
        "kind": "peft",
        "storage": str(tmp_path / "store"),
        "training": {
            "dataset": "ade_corpus_v2",
            "limit": 16,
            "k": 1,
            "template": "bm25",
            "data_dir": str(data_dir),
        },
        "peft": {
            "model": str(tiny),
            "max_steps": 4,
            "checkpoint_every": 2,
            "batch_size": 4,
            "max_length": 64,
            "max_grad_norm": 1.0,
            "lora": {"r": 4, "alpha": 8, "dropout": 0.0},
        },
        "search": {"lr": {"grid": [0.003, 0.03]}},
        "tune": {"metric": "eval_loss", "mode": "min", "num_samples": 1, "scheduler": {"kind": "none"}},
        "ray": {"num_cpus": 2, "temp_dir": ray_temp},
        "mlflow": {
            "tracking_uri": f"sqlite:///{tmp_path / 'mlflow.db'}",
            "experiment": name,
            "register_as": "biorab-ral-adapter",
        },
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def finished_trials(job_dir: Path) -> int:
    done = 0
    for result in job_dir.glob("tune/trial_driver_*/result.json"):
        lines = [json.loads(x) for x in result.read_text().splitlines() if x.strip()]
        done += any(r.get("done") for r in lines)
    return done


def test_killed_tune_job_resumes_to_the_same_best_trial(
    tmp_path: Path, tiny: Path, data_dir: Path, ray_temp: str
) -> None:
    from mlflow import MlflowClient

    from training.config import load_tune_config
    from training.tune_peft import tune_peft

    reference = tune_peft(load_tune_config(write_config(tmp_path / "ref", "ref", tiny, data_dir, ray_temp)))

    path = write_config(tmp_path / "kill", "kill", tiny, data_dir, ray_temp)
    job_dir = load_tune_config(path).job_dir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "biorab.cli.main", "tune", str(path)],
        cwd=REPO,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600
    while finished_trials(job_dir) < 1:
        assert proc.poll() is None, "the tune job ended before it could be killed"
        assert time.monotonic() < deadline, "no trial finished in time"
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)  # driver, Tune and Train actors, raylet and GCS of that session
    proc.wait()
    assert finished_trials(job_dir) == 1

    resumed = tune_peft(load_tune_config(path))
    assert resumed.restored
    assert resumed.best_params == reference.best_params
    assert resumed.best_metric == pytest.approx(reference.best_metric, rel=1e-3)

    client = MlflowClient(tracking_uri=resumed.tracking_uri, registry_uri=resumed.tracking_uri)
    parent = client.get_run(resumed.parent_run_id)
    assert parent.info.status == "FINISHED" and parent.data.tags["best_trial"] == resumed.best_trial
    exp = parent.info.experiment_id
    children = client.search_runs([exp], filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    assert len(children) == 2 and all(c.info.status == "FINISHED" for c in children)
    for child in children:
        steps = [m.step for m in client.get_metric_history(child.info.run_id, "loss")]
        assert sorted(set(steps)) == [1, 2, 3, 4]
    first = min(children, key=lambda c: c.info.start_time)
    assert (
        len(client.get_metric_history(first.info.run_id, "loss")) == 4
    )  # finished before the kill: not redone
    version = client.get_model_version_by_alias("biorab-ral-adapter", "best")
    best_child = next(c for c in children if c.data.tags["biorab.trial_id"] == resumed.best_trial)
    assert version.run_id == best_child.info.run_id
    files = {a.path for a in client.list_artifacts(best_child.info.run_id, "model")}
    assert {"model/adapter_config.json", "model/training_config.json", "model/data.json"} <= files
