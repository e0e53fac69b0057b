"""The ``llm_engine: vllm_processor`` stage on a local Ray, with a stand-in for ``ray.data.llm``'s
processor (vLLM cannot run here): it keeps Ray's contract (``preprocess`` → engine → ``postprocess``, rows
through ``Dataset.map``, a failed request marked ``__inference_error__``), so the lookup, the materialized
split into cached / to-generate, the Arrow round trip of ``sampling_params`` with structured outputs, error
rows, retries and the generation store run for real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from biorab.experiment import ExperimentConfig, ResourcesConfig
from biorab.runner import run_experiment
from biorab.runner.checks.validate import check_experiment
from pipelines.ray_executor import RayExecutor

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
N = 4


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    from pipelines.ray_setup import init_ray

    assert init_ray(ResourcesConfig(num_cpus=2))
    yield
    ray.shutdown()


def fake_build_processor(calls: Path, fail_once: Path, seen: list[Any]) -> Any:
    """A `build_processor` whose engine answers the first allowed choice, or a triple for a regex; the
    request of ``medmcqa/test/0`` fails the first time. Every engine call appends the row id to `calls`."""

    def build(config: Any, preprocess: Any, postprocess: Any) -> Any:
        seen.append(config)

        def engine(row: dict[str, Any]) -> dict[str, Any]:
            with open(calls, "a", encoding="utf-8") as f:
                f.write(row["id"] + "\n")
            spec = row["sampling_params"]["structured_outputs"] or {}
            if row["id"] == "medmcqa/test/0" and not fail_once.exists():
                fail_once.touch()  # as Ray's engine stage: the prompt becomes a snippet, outputs empty
                return {**row, "prompt": row["prompt"][:10], "generated_text": "", "num_input_tokens": 0,
                        "num_generated_tokens": 0, "__inference_error__": "EngineGenerateError: injected"}
            text = list(spec["choice"])[0] if spec.get("choice") else "aspirin|effect|rash"
            return {**row, "generated_text": text, "num_input_tokens": len(row["prompt"].split()),
                    "num_generated_tokens": 1, "__inference_error__": ""}

        def post(row: dict[str, Any]) -> dict[str, Any]:  # as Ray's wrap_postprocess: errors bypass it
            return row if row["__inference_error__"] else {**postprocess(row), "__inference_error__": ""}

        return lambda ds: ds.map(preprocess).map(engine).map(post)

    return build


def test_processor_stage_caches_records_errors_and_retries(
    local_ray: None, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray.data.llm

    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    calls, seen = tmp_path / "calls.txt", []
    monkeypatch.setattr(ray.data.llm, "build_processor",
                        fake_build_processor(calls, tmp_path / "failed-once", seen))
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", "utf-8")
    cfg = ExperimentConfig.model_validate({
        "name": "proc", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "medmcqa", "limit": N}, {"name": "ade", "limit": N}],
        "retrieval": [{"testbed": "none"}],
        "backend": {"name": "vllm", "params": {"model": str(model), "tensor_parallel_size": 2}},
        "sampling": {"max_tokens": 8, "constrained": True}, "n_boot": 20, "tracking": {"enabled": False},
        "resources": {"llm_engine": "vllm_processor", "llm": {"batch_size": 2, "pool_size": 1}},
    })
    check_experiment(cfg)
    first = run_experiment(cfg, executor=RayExecutor())
    assert seen[0].engine_kwargs["tensor_parallel_size"] == 2 and seen[0].should_continue_on_error is True
    assert first.stats.written == 2 * N and first.stats.generated == 2 * N - 1
    assert first.stats.generation_failures == 1
    qa, ade = (pq.read_table(c.predictions_path).to_pylist() for c in first.cells)
    assert [r["id"] for r in qa] == [f"medmcqa/test/{i}" for i in range(N)]
    assert qa[0]["gen_error"] == "vllm_processor: EngineGenerateError: injected"
    failed_prompt = qa[0]["prompt"]
    assert [r["gen_text"] for r in qa[1:]] == ["(A)"] * (N - 1)  # the structured-output choice list
    assert [r["pred_label"] for r in qa[1:]] == ["(A)"] * (N - 1)
    assert {r["gen_text"] for r in ade} == {"aspirin|effect|rash"} and all(r["pred_ok"] for r in ade)
    assert len(calls.read_text().split()) == 2 * N

    second = run_experiment(cfg, executor=RayExecutor())  # only the failed row, and the engine now answers it
    assert second.total_pending == 1 and second.stats.generated == 1
    assert second.cells[0].generation_failures == 0
    retried = pq.read_table(second.cells[0].predictions_path).to_pylist()[0]
    assert retried["gen_text"] == "(A)" and retried["prompt"] == failed_prompt  # the error row kept it whole
    assert calls.read_text().split().count("medmcqa/test/0") == 2

    # every row from the store: the engine idles
    fresh = run_experiment(cfg, executor=RayExecutor(), resume=False)
    assert fresh.stats.generated == 0 and fresh.stats.generation_cache_hits == 2 * N
    assert len(calls.read_text().split()) == 2 * N + 1
