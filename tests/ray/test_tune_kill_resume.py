"""A two-trial PEFT tune job on local Ray (Ray Tune over Ray Train, tiny random-init Llama): an
uninterrupted job, and the same job SIGKILLed (a real subprocess, Ray processes included) after its first
trial finished, then resumed. The resumed job keeps the finished trial (its per-step loss history is not
logged twice), finds the same best trial, and MLflow holds the parent, both children (FINISHED) and the
registered adapter with alias ``best``, read back with `MlflowClient`."""

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

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.full_data, pytest.mark.slow, pytest.mark.timeout(900)]


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
            "max_steps": 8,
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


def second_trial_checkpointed(job_dir: Path) -> bool:
    """The second trial (trials run one at a time here) has written a Train checkpoint: the first trial
    is finished, and the second is part-way."""
    return any(job_dir.glob("train/trial-*_00001/checkpoint_*"))


def test_killed_tune_job_resumes_to_the_same_best_trial(
    tmp_path: Path, tiny: Path, data_dir: Path, ray_temp: str
) -> None:
    from mlflow import MlflowClient

    from training.config import load_tune_config
    from training.tune_peft import tune_peft

    reference = tune_peft(load_tune_config(write_config(tmp_path / "ref", "ref", tiny, data_dir, ray_temp)))

    path = write_config(tmp_path / "kill", "kill", tiny, data_dir, ray_temp)
    job_dir = load_tune_config(path).job_dir()
    # Tune saves its experiment state at most every TUNE_GLOBAL_CHECKPOINT_S (>= 10 s by default).
    env = {**os.environ, "PYTHONPATH": str(REPO), "TUNE_GLOBAL_CHECKPOINT_S": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "biorab.cli.main", "tune", str(path)],
        cwd=REPO,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 600
    while not second_trial_checkpointed(job_dir):
        assert proc.poll() is None, "the tune job ended before it could be killed"
        assert time.monotonic() < deadline, "the second trial did not start in time"
        time.sleep(0.2)
    time.sleep(1.5)  # past Tune's 1 s state-save period
    os.killpg(proc.pid, signal.SIGKILL)  # driver, Tune and Train actors, raylet and GCS of that session
    proc.wait()

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
        assert sorted(set(steps)) == list(range(1, 9))
    first = min(children, key=lambda c: c.info.start_time)
    # The first trial finished before the kill: restored, not redone (its steps are logged once).
    assert len(client.get_metric_history(first.info.run_id, "loss")) == 8
    version = client.get_model_version_by_alias("biorab-ral-adapter", "best")
    best_child = next(c for c in children if c.data.tags["biorab.trial_id"] == resumed.best_trial)
    assert version.run_id == best_child.info.run_id
    files = {a.path for a in client.list_artifacts(best_child.info.run_id, "model")}
    assert {"model/adapter_config.json", "model/training_config.json", "model/data.json"} <= files
