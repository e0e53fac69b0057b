"""A PEFT trial on two Ray Train workers (CPU, gloo DDP) on local Ray, with the tiny random-init Llama.

The config says ``device: cuda`` on this CPU-only machine: each worker must train on the device Ray
assigned it (`ray.train.torch.get_device()`, cpu here; cuda:<rank's GPU> on a GPU node), never on the
literal device, or the workers fail at the first ``.to("cuda")``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def test_two_worker_trial_trains_on_the_device_ray_assigns(tmp_path: Path, data_dir: Path) -> None:
    from tests.support.tiny_causal_lm import build_tiny_lm
    from training.config import load_tune_config
    from training.tune_peft import tune_peft

    tiny = build_tiny_lm(tmp_path / "lm")
    cfg = {
        "name": "two-workers", "kind": "peft", "storage": str(tmp_path / "store"),
        "training": {"dataset": "ade_corpus_v2", "limit": 8, "k": 1, "template": "bm25",
                     "data_dir": str(data_dir)},
        "peft": {"model": str(tiny), "device": "cuda", "max_steps": 2, "checkpoint_every": 2, "batch_size": 2,
                 "max_length": 48, "lora": {"r": 4, "alpha": 8, "dropout": 0.0}},
        "search": {"lr": {"grid": [0.003]}},
        "tune": {"metric": "eval_loss", "mode": "min", "num_samples": 1, "scheduler": {"kind": "none"}},
        "resources": {"num_workers": 2, "use_gpu": False, "cpus_per_worker": 0.5},
        "ray": {"num_cpus": 2},
        "mlflow": {"tracking_uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "two-workers"},
    }
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    outcome = tune_peft(load_tune_config(path))
    assert math.isfinite(outcome.best_metric)
    assert (outcome.best_checkpoint / "adapter_config.json").is_file() or any(
        outcome.best_checkpoint.rglob("adapter_config.json"))
