"""Training throughput under Ray Train vs a bare PyTorch loop: the same `biorab.learn.train_adapter` steps on
the same retrieval-augmented records (same seed, so the same batches), once called directly in a process of
its own, once inside a one-worker Ray Train `TorchTrainer` the way `training/` runs it (reports to Ray at
checkpoints). Each side runs in its own subprocess so peak RSS is its own.

Throughput is samples per second over the step loop (model loading excluded: from the end of the first step
to the end of the last), in wall seconds and in CPU seconds of the training process. On a shared machine the
CPU-second figure is the fairer one; the wall figure swings with other users' load. Both sides use one torch
thread (Ray sets OMP_NUM_THREADS=1 in a 1-CPU worker; the bare subprocess gets the same). Peak memory is the
training process's ru_maxrss (for Ray: the Train worker; the driver's is printed beside it).

Run: ``python bench/train.py [--model smollm2|<folder>] [--steps 8] [--batch-size 4] [--max-length 128]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

for _k, _v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "RAY_USAGE_STATS_ENABLED": "0", "TOKENIZERS_PARALLELISM": "false"}.items():  # fmt: skip
    os.environ.setdefault(_k, _v)

REPO = Path(__file__).resolve().parents[1]


def params_and_records(args: argparse.Namespace) -> tuple[Any, list[Any]]:
    from biorab.learn import PeftTrainParams, TrainingSource, build_instruction_set

    src = TrainingSource(dataset="ade_corpus_v2", limit=args.records, k=1, template="bm25")
    params = PeftTrainParams(model=args.model, batch_size=args.batch_size, max_steps=args.steps,
                             max_length=args.max_length, eval_fraction=0.0, checkpoint_every=args.steps,
                             lora={"r": 8, "alpha": 16, "dropout": 0.0})  # fmt: skip
    return params, list(build_instruction_set(src).records)


class StepClock:
    """The report seam as a stopwatch: wall and CPU time at the end of every step."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __call__(self, metrics: dict[str, float], checkpoint: Path | None) -> None:
        self.wall.append(time.perf_counter())
        self.cpu.append(time.process_time())

    def summary(self, batch_size: int) -> dict[str, float]:
        samples = (len(self.wall) - 1) * batch_size
        return {"samples_per_s": samples / (self.wall[-1] - self.wall[0]),
                "samples_per_cpu_s": samples / (self.cpu[-1] - self.cpu[0]),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip


def run_bare(args: argparse.Namespace) -> dict[str, float]:
    from biorab.learn.peft_train import train_adapter

    params, records = params_and_records(args)
    clock = StepClock()
    train_adapter(params, records, report=clock)
    return clock.summary(args.batch_size)


def ray_worker(config: dict[str, Any]) -> None:
    """The Ray Train worker: the library trainer with a report that times steps and hands checkpoints to
    Ray, as `training.trial.worker_loop` does."""
    import ray.train

    from biorab.learn.config import PeftTrainParams
    from biorab.learn.peft_train import train_adapter

    clock = StepClock()

    def report(metrics: dict[str, float], checkpoint: Path | None) -> None:
        clock(metrics, checkpoint)
        if checkpoint is not None:
            ray.train.report(metrics, checkpoint=ray.train.Checkpoint.from_directory(str(checkpoint)))

    train_adapter(PeftTrainParams.model_validate(config["params"]), config["records"], report=report)
    Path(config["out"]).write_text(json.dumps(clock.summary(config["batch_size"])), encoding="utf-8")


def run_ray(args: argparse.Namespace) -> dict[str, float]:
    import ray
    import ray.train
    from ray.train.torch import TorchTrainer

    from pipelines.ray_auth import local_ray_token

    params, records = params_and_records(args)
    with tempfile.TemporaryDirectory(prefix="rb", dir="/tmp") as tmp:
        local_ray_token(f"{tmp}/r")  # token auth, as every local Ray of `biorab`
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=500_000_000, _temp_dir=f"{tmp}/r",
                 log_to_driver=False)  # fmt: skip
        try:
            out = Path(tmp) / "worker.json"
            trainer = TorchTrainer(
                ray_worker,
                train_loop_config={"params": params.model_dump(), "records": records, "out": str(out),
                                   "batch_size": args.batch_size},  # fmt: skip
                scaling_config=ray.train.ScalingConfig(num_workers=1, resources_per_worker={"CPU": 1}),
                run_config=ray.train.RunConfig(name="bench", storage_path=f"{tmp}/store"),
            )
            trainer.fit()
            result = json.loads(out.read_text(encoding="utf-8"))
        finally:
            ray.shutdown()
    result["driver_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--records", type=int, default=32)
    parser.add_argument("--side", choices=["bare", "ray"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        print(json.dumps(run_bare(args) if args.side == "bare" else run_ray(args)))
        return
    results = {}
    for side in ("bare", "ray"):
        cmd = [sys.executable, __file__, "--side", side, *sys.argv[1:]]
        # Ray gives a 1-CPU Train worker OMP_NUM_THREADS=1; the bare loop gets the same: equal compute.
        env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        results[side] = json.loads(out.stdout.strip().splitlines()[-1])
    bare, ray_ = results["bare"], results["ray"]
    print(f"model {args.model}, {args.steps} steps x batch {args.batch_size}, max_length {args.max_length}")
    print(f"{'':24}{'bare PyTorch':>14}{'Ray Train':>14}{'Ray/bare':>10}")
    for key, label in (("samples_per_s", "samples/s (wall)"), ("samples_per_cpu_s", "samples/CPU-s")):
        print(f"{label:24}{bare[key]:>14.3f}{ray_[key]:>14.3f}{ray_[key] / bare[key]:>10.3f}")
    print(f"{'peak RSS MB (trainer)':24}{bare['peak_rss_mb']:>14.0f}{ray_['peak_rss_mb']:>14.0f}")
    print(f"{'peak RSS MB (Ray driver)':24}{'':>14}{ray_['driver_peak_rss_mb']:>14.0f}")
    overhead = 1 - ray_["samples_per_cpu_s"] / bare["samples_per_cpu_s"]
    print(f"Ray overhead (CPU-s basis): {overhead:+.1%} (target <= 10%)")


if __name__ == "__main__":
    main()
