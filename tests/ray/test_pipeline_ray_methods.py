"""A Detect-and-Correct cell through the Ray Data pipeline: the retrieval actors index the stored
transformed corpus the driver prepared (the plan carries its folder), giving the in-process rows exactly,
with nothing generated again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from biorab.experiment import ExperimentConfig, ResourcesConfig
from biorab.runner import run_experiment
from pipelines.ray_executor import RayExecutor
from tests.support.method_runs import answers

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def predictions(result: object) -> list[list[dict[str, object]]]:
    import pyarrow.parquet as pq

    keep = ("id", "hits", "prompt", "gen_text", "pred_label", "pred_ok", "gen_error")
    return [[{k: r[k] for k in keep} for r in pq.read_table(c.predictions_path).to_pylist()]
            for c in result.cells]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    from pipelines.ray_setup import init_ray

    assert init_ray(ResourcesConfig(num_cpus=2))
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def test_ray_detect_correct_matches_in_process(local_ray: None, tmp_path: Path, data_dir: Path) -> None:
    def config(out: str) -> ExperimentConfig:
        return ExperimentConfig.model_validate({
            "name": "dc", "data_dir": str(data_dir), "output_dir": str(tmp_path / out),
            "datasets": [{"name": "ade_corpus_v2", "limit": 4}],
            "retrieval": [{"testbed": "counterfactual", "rate": 0.8, "method": "detect_correct"}],
            "backend": {"name": "fake", "params": {"mode": "map", "answers": answers(data_dir),
                                                   "answer": "correct"}},
            "sampling": {"max_tokens": 8}, "n_boot": 20, "tracking": {"enabled": False},
        })

    local = run_experiment(config("local"))
    distributed = run_experiment(config("ray"), executor=RayExecutor())
    assert distributed.stats.generated == 0 and distributed.stats.generation_cache_hits == 4
    assert predictions(distributed) == predictions(local)
    assert distributed.cells[0].metrics == local.cells[0].metrics
    assert distributed.cells[0].metrics["detection_recall"]["value"] == 1.0
