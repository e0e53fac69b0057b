"""``exclude_test_duplicates`` through `run_experiment` on Ade-corpus-v2 (full data, fake backend).

Off (the paper's setup), each of the first 100 test sentences whose text is in the training split (12)
retrieves its own copy among its top 3: the cell's leak share is 12/100. On, no hit is its query's own
text and the leak share is 0. The share reaches summary.json, report.md and the cells' MLflow runs."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.corpora.text_identity import normalized_text
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment

pytestmark = pytest.mark.full_data

N = 100  # the first 100 test sentences: 12 sit in the training split (`biorab data leakage`)


def config(tmp_path: Path, data_dir: Path) -> ExperimentConfig:
    entry = {"testbed": "labeled", "retriever": "bm25", "k": 3, "keep_ties": False}
    return ExperimentConfig.model_validate({
        "name": "dups", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}],
        "retrieval": [entry, {**entry, "exclude_test_duplicates": True}],
        "backend": {"name": "fake", "params": {"mode": "fixed", "answer": "1"}},
        "sampling": {"max_tokens": 4}, "n_boot": 0, "tracking": {"enabled": True},
    })


def test_switch_removes_own_text_hits_and_the_leak_share_says_so(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the run's own sqlite store
    result = run_experiment(config(tmp_path, data_dir))
    kept, excluded = result.cells
    assert (kept.plan.label, excluded.plan.label) == (
        "ade_corpus_v2-test__labeled-bm25-k3", "ade_corpus_v2-test__labeled-bm25-k3-notestdups")
    own = {}
    for cell in result.cells:
        rows = pq.read_table(cell.predictions_path).to_pylist()
        own[cell.plan.label] = sum(any(normalized_text(h["key"]) == normalized_text(r["text"])
                                       for h in json.loads(r["hits"])) for r in rows)
        assert all(len(json.loads(r["hits"])) == 3 for r in rows)  # k hits remain after the exclusion
    assert own == {kept.plan.label: 12, excluded.plan.label: 0}
    assert kept.extra["leak_share"] == {"value": 12 / N, "leaking": 12, "queries": N}
    assert excluded.extra["leak_share"] == {"value": 0.0, "leaking": 0, "queries": N}
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert [c["leak_share"]["leaking"] for c in summary["cells"]] == [12, 0]
    report = result.report_path.read_text()
    assert "| ade_corpus_v2-test__labeled-bm25-k3 | 0.120 | 12 / 100 | off |" in report
    assert "| ade_corpus_v2-test__labeled-bm25-k3-notestdups | 0.000 | 0 / 100 | on |" in report

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=result.tracking_uri)
    experiment = client.get_experiment_by_name("dups")
    assert experiment is not None
    children = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])
                if "mlflow.parentRunId" in r.data.tags}
    assert {name: r.data.metrics["leak_share"] for name, r in children.items()} == {
        f"fake/{kept.plan.label}": 0.12, f"fake/{excluded.plan.label}": 0.0}
    assert children[f"fake/{excluded.plan.label}"].data.params["exclude_test_duplicates"] == "True"
    assert "exclude_test_duplicates" not in children[f"fake/{kept.plan.label}"].data.params
