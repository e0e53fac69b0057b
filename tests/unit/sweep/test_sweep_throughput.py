"""GPU-hours from the per-size throughput table, refined by what runs recorded in ``throughput.json``."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.sweep.config import ModelProfile, ThroughputSpec
from biorab.sweep.throughput import gpu_hours, model_size, read_measured, record_throughput


def test_table_estimate_uses_the_nearest_larger_size_and_tensor_parallelism() -> None:
    spec = ThroughputSpec(per_size={8.0: (10_000.0, 1_000.0), 34.0: (2_000.0, 200.0)})
    small = ModelProfile(model="meta-llama/Meta-Llama-3-8B-Instruct")
    big = ModelProfile(model="Qwen/Qwen2.5-32B-Instruct", tensor_parallel_size=2)
    assert model_size(small) == 8.0 and model_size(big) == 32.0
    # 3.6e7 prompt tokens at 1e4/s + 3.6e6 decode tokens at 1e3/s = 7200 s = 2 h on one GPU
    assert gpu_hours(small, spec, prompt_tokens=36_000_000, decode_tokens=3_600_000, generations=1,
                     measured=None) == pytest.approx(2.0)
    # the 32B row (5x slower) on 2 GPUs per engine: 10x the GPU-hours
    assert gpu_hours(big, spec, prompt_tokens=36_000_000, decode_tokens=3_600_000, generations=1,
                     measured=None) == pytest.approx(20.0)
    assert gpu_hours(ModelProfile(backend="fake"), spec, prompt_tokens=10**9, decode_tokens=10**9,
                     generations=10**6, measured=None) == 0.0


def test_measured_throughput_replaces_the_table(tmp_path: Path) -> None:
    run = tmp_path / "sweep" / "m"
    run.mkdir(parents=True)
    record_throughput(run, model_digest="d", generated=100, wall_s=50.0, mean_completion_tokens=10.0)
    # an execution that only read the cache says nothing about the engine
    record_throughput(run, model_digest="d", generated=0, wall_s=3.0, mean_completion_tokens=99.0)
    record_throughput(run, model_digest="d", generated=300, wall_s=150.0, mean_completion_tokens=30.0)
    measured = read_measured(tmp_path / "sweep")["d"]
    assert (measured.seconds_per_generation, measured.mean_completion_tokens, measured.generations) == (
        0.5, 25.0, 400)
    profile = ModelProfile(model="x-8b")
    assert gpu_hours(profile, ThroughputSpec(), prompt_tokens=0, decode_tokens=0, generations=7200,
                     measured=measured) == pytest.approx(1.0)
