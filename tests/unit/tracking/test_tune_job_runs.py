"""A tune job logs through the keyed runs and the params flattening of `biorab run` (`biorab.tracking.runs`,
`biorab.tracking.flatten`), and what it logs is what it logged with its own copies: the parent of the job and
the child of a trial, opened twice (the second time as a resumed job and a restored trial), read back with
`MlflowClient` from the job's SQLite store. The expected runs were read from main before the merge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from training import tracking
from training.config import load_tune_config, trial_params
from training.job import _job_info

REPO = Path(__file__).resolve().parents[3]
DATA = {"records": 12, "digest": "d41d8cd9", "dataset": "ade_corpus_v2"}
PARENT_PARAMS = {"data.dataset": "ade_corpus_v2", "data.digest": "d41d8cd9", "data.records": "12",
                 "metric": "eval_loss", "num_samples": "1"}
LORA = {"lora.alpha": "16", "lora.r": "8", "lora.target_modules": "('q_proj', 'v_proj')"}
TRIAL_PARAMS = {
    "tune_encoder": {**LORA, "batch_size": "8", "checkpoint_every": "8", "device": "cpu",
                     "eval_fraction": "0.2", "kind": "sentence", "lora.dropout": "0.0", "lr": "3e-05",
                     "margin": "1.0", "max_length": "48", "max_steps": "24", "model": "minilm",
                     "negatives": "both", "seed": "0"},
    "tune_peft": {**LORA, "adapter_init": "None", "batch_size": "4", "checkpoint_every": "4", "device": "cpu",
                  "dtype": "float32", "eval_fraction": "0.2", "grad_accum": "1", "lora.dropout": "0.05",
                  "lr": "3e-05", "max_grad_norm": "0.3", "max_length": "192", "max_steps": "12",
                  "model": "smollm2", "quantize": "auto", "seed": "0", "warmup_ratio": "0.03"},
}


def _read_back(job_dir: Path, experiment: str) -> dict[str, Any]:
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{job_dir / 'mlflow.db'}")
    exp = client.get_experiment_by_name(experiment)
    runs = client.search_runs([exp.experiment_id], order_by=["attributes.start_time ASC"])
    index = {r.info.run_id: i for i, r in enumerate(runs)}

    def tag(k: str, v: str) -> str:
        return f"<run {index[v]}>" if k == "mlflow.parentRunId" else v.replace(str(job_dir), "<job>")

    return {"experiment": {"tags": dict(exp.tags),
                           "artifact_location": exp.artifact_location.replace(str(job_dir), "<job>")},
            "runs": [{"name": r.info.run_name, "status": r.info.status,
                      "tags": {k: tag(k, v) for k, v in r.data.tags.items()}, "params": dict(r.data.params)}
                     for r in runs]}


@pytest.mark.parametrize("job", ["tune_encoder", "tune_peft"])
def test_a_tune_job_logs_the_runs_params_and_tags_it_did(job: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = load_tune_config(REPO / "jobs" / f"{job}.yaml").model_copy(update={"storage": str(tmp_path)})
    job_dir = cfg.job_dir()
    job_dir.mkdir(parents=True)
    for _attempt in range(2):  # the second: a resumed job, a restored trial
        info = _job_info(cfg, job_dir, DATA)
        mlflow = tracking.client(info["tracking_uri"])
        tracking.open_trial_run(mlflow, info, "abc_00000", trial_params(cfg, {"lr": 3e-5}))
    assert info["tracking_uri"] == f"sqlite:///{job_dir / 'mlflow.db'}"
    kind = cfg.kind
    assert _read_back(job_dir, "biorab-tune") == {
        "experiment": {"tags": {}, "artifact_location": "file://<job>/mlartifacts"},
        "runs": [
            {"name": cfg.name, "status": "RUNNING", "params": {**PARENT_PARAMS, "kind": kind},
             "tags": {"biorab.tune_job": "<job>", "mlflow.runName": cfg.name}},
            {"name": "abc_00000", "status": "RUNNING", "params": TRIAL_PARAMS[job],
             "tags": {"biorab.trial_id": "abc_00000", "mlflow.parentRunId": "<run 0>",
                      "mlflow.runName": "abc_00000"}},
        ],
    }
