"""The Ray Data pipeline on a local 2-CPU Ray: the same rows as the in-process runner, no regeneration,
and an OpenAI-compatible endpoint with injected faults that loses and duplicates nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from support.fault_openai_server import FaultServer

from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig, ResourcesConfig
from biorab.runner import run_experiment
from biorab.runner.store.shards import read_all_rows
from biorab.tasks import get_template, render
from pipelines.ray_executor import RayExecutor
from tests.support.local_runs import N_ADE, N_QA, make_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """One small local Ray for the module (the pipeline leaves a Ray it did not start running)."""
    import ray

    from pipelines.ray_setup import init_ray

    assert init_ray(ResourcesConfig(num_cpus=2))
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def predictions(result: object) -> list[list[dict[str, object]]]:
    keep = ("id", "hits", "prompt", "gen_text", "pred_label", "pred_ok", "gen_error")
    return [[{k: r[k] for k in keep} for r in pq.read_table(c.predictions_path).to_pylist()]
            for c in result.cells]  # type: ignore[attr-defined]


def test_ray_matches_in_process_and_does_not_regenerate(
    local_ray: None, tmp_path: Path, data_dir: Path
) -> None:
    local = run_experiment(make_config(tmp_path / "local", data_dir))
    cfg = make_config(tmp_path / "ray", data_dir)
    progress: list[tuple[int, int]] = []
    distributed = run_experiment(cfg, executor=RayExecutor(), resume=False,
                                 progress=lambda a, t: progress.append((a, t)))
    assert predictions(distributed) == predictions(local)
    assert [c.metrics for c in distributed.cells] == [c.metrics for c in local.cells]
    assert sum(a for a, _ in progress) == 2 * (N_ADE + N_QA) and {t for _, t in progress} == {22}
    # Everything was generated (and cached) by the in-process run: the Ray run generated nothing new.
    assert distributed.stats.generated == 0 and distributed.stats.generation_cache_hits == 22
    again = run_experiment(cfg, executor=RayExecutor(), resume=False)
    assert again.stats.generated == 0 and predictions(again) == predictions(local)


def test_faulty_openai_endpoint_loses_and_duplicates_nothing(
    local_ray: None, tmp_path: Path, data_dir: Path
) -> None:
    examples = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:N_ADE]
    template = get_template("ade_corpus_v2", variant="noexample")
    prompts = [render(template, ex, []).text for ex in examples]
    faults = {
        prompts[0]: ["500", "malformed"],  # recovers on the 3rd attempt
        prompts[1]: ["hang"],  # times out once, then answers
        prompts[2]: ["503", "503", "503"],  # exhausts the retries → recorded as failed
        prompts[3]: ["no_choices", "malformed", "502"],  # exhausts the retries → recorded as failed
    }
    with FaultServer(faults=faults, hang_s=3.0) as server:
        cfg = ExperimentConfig.model_validate({
            "name": "faulty", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
            "datasets": [{"name": "ade_corpus_v2", "limit": N_ADE}],
            "retrieval": [{"testbed": "none", "template": "noexample"}],
            "backend": {"name": "openai", "params": {"base_url": server.base_url, "model": "fault-model",
                        "max_retries": 2, "timeout_s": 1.0, "backoff_s": 0.01, "concurrency": 4}},
            "sampling": {"max_tokens": 4}, "n_boot": 20, "tracking": {"enabled": False},
            "resources": {"llm": {"batch_size": 3}},
        })
        first = run_experiment(cfg, executor=RayExecutor())
        cell = first.cells[0]
        assert first.stats.written == N_ADE and first.stats.generation_failures == 2
        assert cell.n == N_ADE and cell.generation_failures == 2
        rows = pq.read_table(cell.predictions_path).to_pylist()
        assert [r["id"] for r in rows] == [ex.id for ex in examples]
        failed = {r["id"] for r in rows if r["gen_error"]}
        assert failed == {examples[2].id, examples[3].id}
        assert all(r["gen_text"].startswith("re: ") for r in rows if not r["gen_error"])
        assert server.attempts(prompts[0]) == 3 and server.attempts(prompts[2]) == 3
        # the failed rows only, and now the server answers them
        second = run_experiment(cfg, executor=RayExecutor())
        assert second.total_pending == 2 and second.stats.generated == 2
        assert second.cells[0].generation_failures == 0
    history = read_all_rows(tmp_path / "runs" / "faulty" / "cells" / cell.plan.cell_id)
    assert len(history) == N_ADE + 2  # the two failed attempts are kept, superseded by their retries
    assert len({r["id"] for r in history if r["gen_error"] is None}) == N_ADE
