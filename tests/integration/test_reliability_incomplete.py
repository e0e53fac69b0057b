"""A run whose generations failed is incomplete: exit status 3, failures reported apart from parse
failures, and no metric value in MLflow that could pass for a measured score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_runs import biorab, write_config

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


@pytest.fixture(autouse=True)
def run_dir_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the run dir's own store (``$MLFLOW_TRACKING_URI`` would take precedence)."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)

ALL_FAIL = {"backend": {"name": "fake", "params": {"mode": "choice", "fail_every": 1,
                                                   "fail_mode": "error_rows"}},
            "tracking": {"enabled": True}}


def test_all_failed_generations_exit_3_and_log_no_score(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir, **ALL_FAIL)
    run_dir = tmp_path / "runs" / "rel"
    out = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert out.returncode == 3, out.stderr
    assert "incomplete: 6 row(s) failed in 1 cell(s)" in out.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    (cell,) = summary["cells"]
    assert summary["complete"] is False and cell["incomplete"] is True
    assert (cell["generation_failures"], cell["parse_failures"]) == (6, 0)
    assert "incomplete (" in (run_dir / "report.md").read_text()

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{run_dir / 'mlflow.db'}")
    exp = client.get_experiment_by_name("rel")
    assert exp is not None
    (run,) = [r for r in client.search_runs([exp.experiment_id]) if "cell_id" in r.data.tags]
    assert run.data.tags["incomplete"] == "true"
    # counts only (rows_written: the cell's live progress; token use, and the 6 replies not ended by
    # `stop`: here all failed), no score
    assert run.data.metrics == {"n": 6.0, "parse_failures": 0.0, "generation_failures": 6.0,
                                "rows_written": 6.0, "prompt_tokens": 0.0, "completion_tokens": 0.0,
                                "reasoning_tokens": 0.0, "not_stopped": 6.0}

    # a working backend (another cell: the backend params are in the fingerprint) completes: exit 0
    fixed = write_config(tmp_path, data_dir, **{**ALL_FAIL, "backend": {"name": "fake",
                                                                        "params": {"mode": "choice"}}})
    again = biorab("run", str(fixed), "--no-ray", cache=tmp_path / "cache")
    assert again.returncode == 0, again.stderr
    new = json.loads((run_dir / "summary.json").read_text())["cells"][0]["cell_id"]
    (run,) = client.search_runs([exp.experiment_id], filter_string=f"tags.cell_id = '{new}'")
    assert run.data.tags["incomplete"] == "false" and "accuracy" in run.data.metrics
