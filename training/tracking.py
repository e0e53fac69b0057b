"""MLflow for a tune job: one parent run per job, one child run per trial, the best model logged with its
training config and data digests, and registered under an alias (``models:/<name>@best``).

Everything goes through `MlflowClient` with explicit run ids (no active-run globals), so the Tune driver,
the trial drivers and the Ray Train workers can all log into the runs the driver created. A resumed job
finds its parent (tag ``biorab.tune_job``) and each trial its child (tag ``biorab.trial_id``) again, so a
restore continues the same runs rather than making new ones: the keyed runs and the params are those of
`biorab run` (`biorab.tracking.runs`, `biorab.tracking.flatten`), with the tune jobs' own tags.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path
from typing import Any

from biorab.tracking.flatten import mlflow_params
from biorab.tracking.mlflow_tracker import artifact_root
from biorab.tracking.preflight import resolve_uri
from biorab.tracking.runs import MLFLOW_PARENT, log_params_once, open_experiment, open_tagged_run
from training.config import TuneJobConfig

JOB_TAG = "biorab.tune_job"
TRIAL_TAG = "biorab.trial_id"


def client(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def open_job_run(cfg: TuneJobConfig, job_dir: Path, params: dict[str, Any]) -> tuple[str, str, str]:
    """The job's parent run (tag ``biorab.tune_job``: the job dir), opened or reopened with `params`: the
    store's URI (the configured one, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<job dir>/mlflow.db``),
    the experiment's id (a new one keeps its artifacts in ``<job dir>/mlartifacts`` for a local store) and
    the run's id."""
    uri = resolve_uri(cfg.mlflow.tracking_uri, job_dir)
    mlflow = client(uri)
    exp_id = open_experiment(mlflow, cfg.mlflow.experiment, artifact_root(uri, job_dir))
    run_id = open_tagged_run(mlflow, exp_id, JOB_TAG, str(job_dir), name=cfg.name, tags={})
    log_params(mlflow, run_id, params)
    return uri, exp_id, run_id


def open_trial_run(mlflow: Any, job: dict[str, Any], trial_id: str, params: dict[str, Any]) -> str:
    """A trial's child run (tag ``biorab.trial_id``) under the job's parent, opened or reopened (a restored
    trial) with `params`; its id."""
    run_id = open_tagged_run(mlflow, job["experiment_id"], TRIAL_TAG, trial_id, name=trial_id,
                             tags={MLFLOW_PARENT: job["run_id"]})
    log_params(mlflow, run_id, params)
    return run_id


def log_params(mlflow: Any, run_id: str, params: dict[str, Any]) -> None:
    """Flat params (``lora.r``; a tuple is one param); a param logged before is not logged again on
    resume."""
    log_params_once(mlflow, mlflow.get_run(run_id), run_id, mlflow_params(params, sequences="whole"))


def log_step(mlflow: Any, run_id: str, metrics: dict[str, float]) -> None:
    from mlflow.entities import Metric

    step = int(metrics.get("step", 0))
    import time

    now = int(time.time() * 1000)
    mlflow.log_batch(
        run_id, metrics=[Metric(k, float(v), now, step) for k, v in metrics.items() if k != "step"]
    )


def log_best_model(
    mlflow: Any,
    run_id: str,
    checkpoint: Path,
    cfg: TuneJobConfig,
    trial_params: dict[str, Any],
    data: dict[str, Any],
) -> str:
    """Log the best checkpoint's model folder with ``training_config.json`` and ``data.json`` under
    artifact path ``model`` of `run_id`; returns its artifact URI."""
    with tempfile.TemporaryDirectory(prefix="biorab-model-") as tmp:
        folder = Path(tmp) / "model"
        _copy_model(checkpoint, folder)
        config = {"job": cfg.model_dump(mode="json"), "trial_params": trial_params}
        (folder / "training_config.json").write_text(
            json.dumps(config, indent=2, default=str), encoding="utf-8"
        )
        (folder / "data.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
        mlflow.log_artifacts(run_id, str(folder), artifact_path="model")
    return f"{mlflow.get_run(run_id).info.artifact_uri}/model"


def register(mlflow: Any, name: str, source: str, run_id: str, alias: str) -> str:
    """A new version of registered model `name` from `source`, with `alias` moved to it; its version."""
    from mlflow.exceptions import MlflowException

    with contextlib.suppress(MlflowException):  # already registered: add a version
        mlflow.create_registered_model(name)
    version = mlflow.create_model_version(name, source, run_id=run_id).version
    mlflow.set_registered_model_alias(name, alias, version)
    return str(version)


def _copy_model(checkpoint: Path, folder: Path) -> None:
    """The model files of a checkpoint (its training state ``state.pt`` stays behind)."""
    import shutil

    sub = checkpoint / "adapter"
    source = checkpoint if (checkpoint / "encoder.json").is_file() or not sub.is_dir() else sub
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("state.pt"))
