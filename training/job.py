"""Run one tune job: build the training set once, start (or restore) the Tuner, then log and register
the best trial's model. `tune_encoder` and `tune_peft` differ only in the training set they pass."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from training.config import TuneJobConfig

Progress = Callable[[dict[str, Any]], None]
DRIVER_CPU = 0.05


@dataclass
class TuneOutcome:
    """What a finished job produced."""

    job_dir: Path
    best_trial: str
    best_params: dict[str, Any]
    best_metric: float
    best_checkpoint: Path
    trials: dict[str, dict[str, Any]] = field(default_factory=dict)
    restored: bool = False
    tracking_uri: str | None = None
    parent_run_id: str | None = None
    registered: str | None = None
    extra: dict[str, float] = field(default_factory=dict)


def search_space(cfg: TuneJobConfig) -> dict[str, Any]:
    """The Tune param space: one entry per dotted parameter."""
    from ray import tune

    make = {
        "grid": tune.grid_search,
        "choice": tune.choice,
        "uniform": lambda a: tune.uniform(*a),
        "loguniform": lambda a: tune.loguniform(*a),
        "randint": lambda a: tune.randint(*a),
    }
    return {name: make[kind](args) for name, space in cfg.search.items() for kind, args in space.items()}


def start_ray(cfg: TuneJobConfig) -> bool:
    """Connect to `cfg.ray.address` or start a small local Ray (`pipelines.ray_setup.start_ray`, with the
    dashboard Ray Train needs and without the workers' output); True when this call started it."""
    import os

    from pipelines.ray_setup import start_ray as start

    # Starting a Train worker (a fresh process importing torch) can take minutes on a loaded 2-core box;
    # Ray Train's default 60 s startup timeout then fails trials that would have run.
    timeout = os.environ.get("RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S", "600")
    env = {"RAY_TRAIN_WORKER_GROUP_START_TIMEOUT_S": timeout}
    return start(cfg.ray, worker_logs="joined", train_dashboard=True, env_vars=env)


def run_job(
    cfg: TuneJobConfig,
    records: Any,
    data: dict[str, Any],
    *,
    fresh: bool = False,
    progress: Progress | None = None,
    root: Path | None = None,
) -> TuneOutcome:
    """Tune `cfg` over `records` (already built and checked), resuming an interrupted job unless `fresh`."""
    import ray

    job_dir = cfg.job_dir(root)
    if fresh and job_dir.exists():
        shutil.rmtree(job_dir)
    job_dir.mkdir(parents=True, exist_ok=True)
    started = start_ray(cfg)
    try:
        job = _job_info(cfg, job_dir, data)
        tuner, restored = _tuner(cfg, job, records, job_dir, progress)
        grid = tuner.fit()
        outcome = _best(cfg, grid, job_dir, restored)
        if job["run_id"]:
            _finish_runs(cfg, job, grid, outcome, data)
        return outcome
    finally:
        if started:
            ray.shutdown()


def _job_info(cfg: TuneJobConfig, job_dir: Path, data: dict[str, Any]) -> dict[str, Any]:
    from training import tracking

    info: dict[str, Any] = {
        "config": cfg.model_dump(mode="json"),
        "run_id": None,
        "tracking_uri": None,
        "experiment_id": None,
        "train_storage": str(job_dir / "train"),
    }
    if not cfg.mlflow.enabled:
        return info
    params = {"kind": cfg.kind, "num_samples": cfg.tune.num_samples, "metric": cfg.tune.metric,
              **{f"data.{k}": v for k, v in data.items()}}
    uri, exp, run_id = tracking.open_job_run(cfg, job_dir, params)
    return {**info, "run_id": run_id, "tracking_uri": uri, "experiment_id": exp}


def _tuner(
    cfg: TuneJobConfig, job: dict[str, Any], records: Any, job_dir: Path, progress: Progress | None
) -> tuple[Any, bool]:
    from ray import tune

    from training.progress import ProgressCallback
    from training.trial import trial_driver

    # The trial driver only waits on its Ray Train run; the CPUs belong to the Train workers.
    trainable = tune.with_resources(
        tune.with_parameters(trial_driver, job=job, records=records), {"cpu": DRIVER_CPU}
    )
    path = str(job_dir / "tune")
    if tune.Tuner.can_restore(path):
        return tune.Tuner.restore(path, trainable=trainable, resume_errored=True), True
    t = cfg.tune
    per_trial = cfg.resources.num_workers * cfg.resources.cpus_per_worker
    concurrent = t.max_concurrent_trials or max(1, int(cfg.ray.num_cpus // (per_trial + DRIVER_CPU)))
    scheduler = None
    if t.scheduler.kind == "asha":
        from ray.tune.schedulers import ASHAScheduler

        scheduler = ASHAScheduler(
            time_attr="training_iteration",
            grace_period=t.scheduler.grace_period,
            reduction_factor=t.scheduler.reduction_factor,
            max_t=max(1, -(-cfg.base_params().max_steps // cfg.base_params().checkpoint_every)),
        )
    stop = {k: v for k, v in cfg.stop.model_dump().items() if v is not None}
    callbacks: list[Any] = [ProgressCallback(cfg.tune.metric, cfg.tune.mode, progress)] if progress else []
    tuner = tune.Tuner(
        trainable,
        param_space=search_space(cfg),
        tune_config=tune.TuneConfig(
            metric=t.metric,
            mode=t.mode,
            num_samples=t.num_samples,
            max_concurrent_trials=concurrent,
            scheduler=scheduler,
        ),
        run_config=tune.RunConfig(
            name="tune",
            storage_path=str(job_dir),
            stop=stop or None,
            failure_config=tune.FailureConfig(max_failures=cfg.max_failures),
            callbacks=callbacks,
            verbose=0,
        ),
    )
    return tuner, False


def _best(cfg: TuneJobConfig, grid: Any, job_dir: Path, restored: bool) -> TuneOutcome:
    from biorab.common.errors import BioRABError

    trials = {
        r.metrics.get("trial_id", str(i)): {
            "metrics": dict(r.metrics or {}),
            "config": dict(r.config or {}),
            "error": str(r.error) if r.error else None,
        }
        for i, r in enumerate(grid)
    }
    ok = [r for r in grid if r.error is None and r.metrics and cfg.tune.metric in r.metrics]
    if not ok:
        errors = "; ".join(str(r.error) for r in grid if r.error)[:2000]
        raise BioRABError(
            f"no trial of tune job {cfg.name} finished with metric {cfg.tune.metric!r}: {errors}"
        )
    sign = 1 if cfg.tune.mode == "min" else -1
    best = min(ok, key=lambda r: (sign * r.metrics[cfg.tune.metric], r.metrics["trial_id"]))
    return TuneOutcome(
        job_dir=job_dir,
        best_trial=best.metrics["trial_id"],
        best_params=dict(best.config),
        best_metric=float(best.metrics[cfg.tune.metric]),
        best_checkpoint=Path(best.metrics["checkpoint_path"]),
        trials=trials,
        restored=restored,
    )


def _finish_runs(
    cfg: TuneJobConfig, job: dict[str, Any], grid: Any, outcome: TuneOutcome, data: dict[str, Any]
) -> None:
    """Close every child run (ASHA-stopped trials never reached their own end), log the best model on the
    best trial's run, register it, and end the parent run."""
    from training import tracking
    from training.config import trial_params

    client = tracking.client(job["tracking_uri"])
    children = {}
    for r in grid:
        tid = (r.metrics or {}).get("trial_id")
        found = client.search_runs(
            [job["experiment_id"]], filter_string=f"tags.`{tracking.TRIAL_TAG}` = '{tid}'"
        )
        for run in found:
            children[tid] = run.info.run_id
            if run.info.status == "RUNNING":
                client.set_terminated(run.info.run_id, status="FAILED" if r.error else "FINISHED")
    best_run = children[outcome.best_trial]
    params = trial_params(cfg, outcome.best_params)
    source = tracking.log_best_model(client, best_run, outcome.best_checkpoint, cfg, params, data)
    if cfg.mlflow.register_as:
        version = tracking.register(client, cfg.mlflow.register_as, source, best_run, cfg.mlflow.alias)
        outcome.registered = f"models:/{cfg.mlflow.register_as}@{cfg.mlflow.alias} (version {version})"
    client.set_tag(job["run_id"], "best_trial", outcome.best_trial)
    client.log_metric(job["run_id"], f"best_{cfg.tune.metric}", outcome.best_metric)
    client.set_terminated(job["run_id"], status="FINISHED")
    outcome.tracking_uri, outcome.parent_run_id = job["tracking_uri"], job["run_id"]
