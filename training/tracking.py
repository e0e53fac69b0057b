"""MLflow for a tune job: one parent run per job, one child run per trial, the best model logged with its
training config and data digests, and registered under an alias (``models:/<name>@best``).

Everything goes through `MlflowClient` with explicit run ids (no active-run globals), so the Tune driver,
the trial drivers and the Ray Train workers can all log into the runs the driver created. A resumed job
finds its parent (tag ``biorab.tune_job``) and each trial its child (tag ``biorab.trial_id``) again, so a
restore continues the same runs rather than making new ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from training.config import TuneJobConfig

JOB_TAG = "biorab.tune_job"
TRIAL_TAG = "biorab.trial_id"


def tracking_uri(cfg: TuneJobConfig, job_dir: Path) -> str:
    """The configured URI, else ``$MLFLOW_TRACKING_URI``, else ``sqlite:///<job dir>/mlflow.db``."""
    return (
        cfg.mlflow.tracking_uri
        or os.environ.get("MLFLOW_TRACKING_URI")
        or (f"sqlite:///{job_dir / 'mlflow.db'}")
    )


def client(uri: str) -> Any:
    from mlflow import MlflowClient

    return MlflowClient(tracking_uri=uri, registry_uri=uri)


def experiment_id(mlflow: Any, name: str, job_dir: Path, uri: str) -> str:
    """The experiment's id; a new one keeps its artifacts in ``<job dir>/mlartifacts`` for a local store."""
    found = mlflow.get_experiment_by_name(name)
    if found is not None:
        return str(found.experiment_id)
    remote = uri.split(":", 1)[0].lower() in ("http", "https", "databricks")
    location = None if remote else (job_dir / "mlartifacts").as_uri()
    return str(mlflow.create_experiment(name, artifact_location=location))


def find_or_create_run(
    mlflow: Any, exp_id: str, tags: dict[str, str], *, name: str, parent: str | None = None
) -> str:
    """The run with these tags (resume), or a new one (a child of `parent` when given)."""
    query = " and ".join(f"tags.`{k}` = '{v}'" for k, v in tags.items())
    found = mlflow.search_runs([exp_id], filter_string=query, max_results=1)
    if found:
        run_id = str(found[0].info.run_id)
        mlflow.update_run(run_id, status="RUNNING")
        return run_id
    all_tags = {**tags, **({"mlflow.parentRunId": parent} if parent else {})}
    return str(mlflow.create_run(exp_id, tags=all_tags, run_name=name).info.run_id)


def log_params(mlflow: Any, run_id: str, params: dict[str, Any]) -> None:
    """Flat params (``lora.r``...); a param logged before with the same value is fine on resume."""
    from mlflow.entities import Param

    flat = _flatten(params)
    known = mlflow.get_run(run_id).data.params
    fresh = [Param(k, str(v)[:500]) for k, v in flat.items() if k not in known]
    if fresh:
        mlflow.log_batch(run_id, params=fresh)


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


def _flatten(params: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, dict):
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out
