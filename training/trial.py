"""One Tune trial: a Ray Train `TorchTrainer` whose workers run a `biorab.learn` trainer.

The trial driver (a Tune function trainable) opens the trial's MLflow child run, builds the trainer with a
name derived from the trial id (so a restored trial finds its own Train checkpoints and resumes from the
latest one) and ends the child run FINISHED or FAILED. Workers plug Ray into the library's one seam,
``report(metrics, checkpoint)``: every step's metrics go to the child run, and every evaluated checkpoint
goes to Ray Train (and from there to Tune, through `TuneReportCallback`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.config import TuneJobConfig


def worker_loop(config: dict[str, Any]) -> None:
    """The Ray Train per-worker function: train, reporting steps to MLflow and checkpoints to Ray."""
    import ray.train

    from training import tracking

    ctx = ray.train.get_context()
    rank, world = ctx.get_world_rank(), ctx.get_world_size()
    mlflow = tracking.client(config["tracking_uri"]) if config["run_id"] and rank == 0 else None

    def report(metrics: dict[str, float], checkpoint: Path | None) -> None:
        if mlflow is not None:
            tracking.log_step(mlflow, config["run_id"], metrics)
        if checkpoint is not None:  # only evaluated checkpoints are Tune iterations (ASHA's time unit)
            ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(str(checkpoint)))

    resume = ray.train.get_checkpoint()
    wrap = None
    if world > 1:
        from ray.train.torch import prepare_model

        wrap = prepare_model
    records = config["records"]
    # The device Ray assigned to this worker (cuda:<its GPU>, or cpu), not the config's literal `device`:
    # with two GPU workers on one node a literal `cuda` would put rank 1's model and batches on GPU 0.
    config = {**config, "params": {**config["params"], "device": worker_device()}}
    with resume.as_directory() if resume is not None else _nothing() as folder:
        _train(config, records, report, Path(folder) if folder else None, (rank, world), wrap)


def worker_device() -> str:
    """This Ray Train worker's torch device, as a string for the trainers' ``device`` param."""
    from ray.train.torch import get_device

    return str(get_device())


def _train(
    config: dict[str, Any], records: Any, report: Any, resume: Path | None, shard: tuple[int, int], wrap: Any
) -> None:
    if config["kind"] == "encoder":
        from biorab.learn.config import EncoderTrainParams
        from biorab.learn.encoder_train import train_encoder

        train_encoder(
            EncoderTrainParams.model_validate(config["params"]),
            records,
            report=report,
            resume_from=resume,
            shard=shard,
            wrap=wrap,
        )
    else:
        from biorab.learn.config import PeftTrainParams
        from biorab.learn.peft_train import train_adapter

        train_adapter(
            PeftTrainParams.model_validate(config["params"]),
            records,
            report=report,
            resume_from=resume,
            shard=shard,
            wrap=wrap,
        )


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def trial_driver(trial_config: dict[str, Any], *, job: dict[str, Any], records: Any) -> None:
    """The Tune trainable of one trial (see the module docstring)."""
    import ray.train
    import ray.tune
    from ray.train.torch import TorchTrainer
    from ray.tune.integration.ray_train import TuneReportCallback

    from training import tracking
    from training.config import trial_params

    cfg = TuneJobConfig.model_validate(job["config"])
    trial_id = ray.tune.get_context().get_trial_id()
    params = trial_params(cfg, trial_config)
    mlflow, run_id = None, None
    if job["run_id"]:
        mlflow = tracking.client(job["tracking_uri"])
        run_id = tracking.open_trial_run(mlflow, job, trial_id, params)
    r = cfg.resources
    callbacks: list[Any] = [TuneReportCallback()]
    trainer = TorchTrainer(
        worker_loop,
        train_loop_config={
            "kind": cfg.kind,
            "params": params,
            "records": records,
            "run_id": run_id,
            "tracking_uri": job["tracking_uri"],
        },
        scaling_config=ray.train.ScalingConfig(
            num_workers=r.num_workers,
            use_gpu=r.use_gpu,
            resources_per_worker={
                "CPU": r.cpus_per_worker,
                **({"GPU": r.gpus_per_worker} if r.use_gpu else {}),
            },
        ),
        run_config=ray.train.RunConfig(
            name=f"trial-{trial_id}",
            storage_path=job["train_storage"],
            callbacks=callbacks,
            failure_config=ray.train.FailureConfig(max_failures=cfg.max_failures),
            checkpoint_config=ray.train.CheckpointConfig(num_to_keep=cfg.num_to_keep),
        ),
    )
    try:
        trainer.fit()
    except BaseException:
        if mlflow is not None and run_id is not None:
            mlflow.set_terminated(run_id, status="FAILED")
        raise
    if mlflow is not None and run_id is not None:
        mlflow.set_terminated(run_id, status="FINISHED")
