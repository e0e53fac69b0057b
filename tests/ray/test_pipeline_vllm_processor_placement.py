"""Tensor-parallel placement of the ``vllm_processor`` path, on a local Ray with fake GPUs: the resource
requests Ray receives for each engine replica are one placement group of ``tensor_parallel_size`` bundles
of one GPU each (PACK), and Ray places two replicas' groups on four (fake) GPUs. The engine does not run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from biorab.experiment import ExperimentConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture
def fake_gpu_ray() -> Iterator[None]:
    import ray

    ray.init(num_cpus=8, num_gpus=4, include_dashboard=False)  # GPUs are just a resource count to Ray
    yield
    ray.shutdown()


def test_each_replica_gets_a_placement_group_of_tp_gpu_bundles(fake_gpu_ray: None, tmp_path: Path) -> None:
    import ray
    from ray.data.llm import build_processor
    from ray.util.placement_group import placement_group_table

    from pipelines.vllm_processor import processor_config

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", "utf-8")
    cfg = ExperimentConfig.model_validate({
        "name": "tp", "output_dir": str(tmp_path / "runs"), "datasets": [{"name": "medmcqa", "limit": 1}],
        "backend": {"name": "vllm", "params": {"model": str(model), "tensor_parallel_size": 2}},
        "resources": {"num_cpus": 8, "llm_engine": "vllm_processor",
                      "llm": {"batch_size": 8, "pool_size": 2}},
        "tracking": {"enabled": False},
    })
    engine = processor_config(cfg)
    assert engine.concurrency == 2 and engine.placement_group_config is None  # Ray's GPU default
    stage = build_processor(engine).get_stage_by_name("vLLMEngineStage")
    kwargs = stage.map_batches_kwargs
    assert kwargs["num_gpus"] == 0  # the actor itself holds none: its placement group does
    groups = [kwargs["ray_remote_args_fn"]()["scheduling_strategy"].placement_group for _ in range(2)]
    ray.get([g.ready() for g in groups], timeout=60)  # both replicas fit the four fake GPUs
    for group in groups:
        table = placement_group_table(group)
        assert table["strategy"] == "PACK"
        assert list(table["bundles"].values()) == [{"GPU": 1.0, "CPU": 1.0}] * 2
    assert ray.available_resources().get("GPU", 0) == 0  # 2 replicas x tensor_parallel_size 2
