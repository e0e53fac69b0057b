"""DrugMech cells on the Ray Data pipeline (local 2-CPU Ray): the same rows, verdicts and accuracies as the
in-process runner, per-run seeds honoured by the LLM actor, and no regeneration."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.experiment import ResourcesConfig
from biorab.runner import run_experiment
from pipelines.ray_executor import RayExecutor
from tests.support.drugmech_runs import make_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    from pipelines.ray_setup import init_ray

    assert init_ray(ResourcesConfig(num_cpus=2))
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def drugmech_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drugmechdb_dir: Path,
                 drugmechcf_dir: Path) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BIORAB_DRUGMECHDB_DIR", str(drugmechdb_dir))
    monkeypatch.setenv("BIORAB_DRUGMECHCF_DIR", str(drugmechcf_dir))


def rows(result: object) -> list[list[dict[str, object]]]:
    keep = ("id", "prompt", "gen_key", "gen_text", "gen_finish_reason", "pred_ok", "pred_label",
            "pred_scores")
    return [[{k: r[k] for k in keep} for r in pq.read_table(c.predictions_path).to_pylist()]
            for c in result.cells]  # type: ignore[attr-defined]


def test_drugmech_on_ray_matches_in_process(local_ray: None, tmp_path: Path) -> None:
    distributed = run_experiment(make_config(tmp_path / "ray"), executor=RayExecutor())
    assert (distributed.stats.written, distributed.stats.generated) == (32, 32)
    local = run_experiment(make_config(tmp_path / "local"))
    # The in-process run found every generation in the store the Ray run filled: same keys, same seeds.
    assert (local.stats.generated, local.stats.generation_cache_hits) == (0, 32)
    assert rows(distributed) == rows(local)
    assert [c.metrics for c in distributed.cells] == [c.metrics for c in local.cells]
    # the same sections; token use too, except what this run generated itself (``fresh_*``): the Ray run
    # made every answer, the in-process run found them all in the store
    fresh = ("fresh_prompt_tokens", "fresh_completion_tokens")
    ray_usage, local_usage = distributed.sections.pop("usage"), local.sections.pop("usage")
    assert distributed.sections == local.sections
    assert {k: v for k, v in ray_usage.items() if k not in fresh} == \
        {k: v for k, v in local_usage.items() if k not in fresh}
    assert [ray_usage[k] for k in fresh] == [ray_usage["prompt_tokens"], ray_usage["completion_tokens"]]
    assert [local_usage[k] for k in fresh] == [0, 0]
    again = run_experiment(make_config(tmp_path / "ray"), executor=RayExecutor())
    assert again.total_pending == 0 and again.stats.generated == 0
