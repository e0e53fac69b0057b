"""``llm_engine: vllm_processor`` for real: ``ray.data.llm``'s vLLM processor drives vllm-cpu on local Ray
(jobs/smoke_vllm.yaml, one instance per dataset, no retrieval). With ``device: cpu`` each engine replica
gets a CPU bundle (Ray's default asks for a GPU). A rerun reads every row from the cache."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from biorab.common.paths import cache_dir
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from biorab.runner.checks.validate import check_experiment, load_experiment
from pipelines.ray_executor import RayExecutor
from tests.support.vllm_settings import ENGINE_ENV

REPO = Path(__file__).resolve().parents[2]
REQUIRED = os.environ.get("BIORAB_REQUIRE_VLLM") == "1"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(importlib.util.find_spec("vllm") is None and not REQUIRED,
                       reason="vLLM not installed"),
]


def test_ray_data_llm_processor_runs_vllm_cpu(tmp_path: Path, data_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    model_cache = str(cache_dir())
    for name, value in ENGINE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    raw = load_experiment(REPO / "jobs" / "smoke_vllm.yaml").model_dump(mode="json")
    raw["backend"]["params"]["cache_dir"] = model_cache
    raw["resources"]["llm_engine"] = "vllm_processor"
    cfg = ExperimentConfig.model_validate({
        **raw, "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"), "n_boot": 10,
        "retrieval": [{"testbed": "none", "template": "noexample"}], "tracking": {"enabled": False},
    }).with_limit(1)
    check_experiment(cfg)
    first = run_experiment(cfg, executor=RayExecutor(), track=False)
    assert (first.stats.written, first.stats.generated, first.stats.generation_failures) == (3, 3, 0)
    for cell in first.cells:
        assert cell.parse_failures == 0, cell.plan.cell_id
    again = run_experiment(cfg, executor=RayExecutor(), resume=False, track=False)
    assert (again.stats.generated, again.stats.generation_cache_hits) == (0, 3)
