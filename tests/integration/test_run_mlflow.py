"""Each cell becomes one MLflow run in the run dir's SQLite store; read it back with `MlflowClient`."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.runner import run_experiment
from biorab.tracking.flatten import mlflow_params
from biorab.tracking.mlflow_tracker import default_tracking_uri
from tests.support.local_runs import N_ADE, N_QA, make_config


@pytest.mark.slow
def test_mlflow_runs_read_back(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # proves nothing is written to $HOME
    cfg = make_config(tmp_path, data_dir, retrieval=[{"testbed": "none"}])
    cfg = cfg.model_copy(update={"tracking": cfg.tracking.model_copy(update={"enabled": True})})
    result = run_experiment(cfg)
    assert result.tracking_uri == default_tracking_uri(result.run_dir)
    assert result.tracking_uri == f"sqlite:///{tmp_path}/runs/local/mlflow.db"

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=result.tracking_uri)
    experiment = client.get_experiment_by_name("local")
    assert experiment is not None and experiment.artifact_location.startswith(f"file://{tmp_path}/runs/local/")
    runs = {r.data.tags["dataset"]: r for r in client.search_runs([experiment.experiment_id])}
    assert sorted(runs) == ["ade_corpus_v2", "medmcqa"]
    ade = runs["ade_corpus_v2"]
    assert ade.info.status == "FINISHED" and ade.info.run_name == "ade_corpus_v2-test__none"
    assert {k: ade.data.tags[k] for k in ("task", "retriever", "corpus", "backend")} == {
        "task": "classification", "retriever": "none", "corpus": "none", "backend": "fake"}
    assert ade.data.metrics["accuracy"] == pytest.approx(5 / 6)
    assert ade.data.metrics["accuracy_ci_low"] <= 5 / 6 <= ade.data.metrics["accuracy_ci_high"]
    assert ade.data.metrics["n"] == N_ADE and runs["medmcqa"].data.metrics["n"] == N_QA
    assert ade.data.metrics["generation_failures"] == 0
    params = ade.data.params
    assert params["backend.name"] == "fake" and params["datasets.0.name"] == "ade_corpus_v2"
    assert params["sampling.max_tokens"] == "8" and params["retrieval.0.testbed"] == "none"
    # the full resolved config, sampling params and seed included
    assert params == mlflow_params(cfg.model_dump(mode="json"))
    assert (params["sampling.seed"], params["sampling.temperature"], params["seed"]) == ("0", "0.0", "0")
    artifacts = {a.path for a in client.list_artifacts(ade.info.run_id)}
    assert artifacts == {"predictions", "report.md", "config.yaml"}
    (pred,) = client.list_artifacts(ade.info.run_id, "predictions")
    assert pred.path == f"predictions/{result.cells[0].plan.cell_id}.parquet"
    got = Path(client.download_artifacts(ade.info.run_id, "", str(tmp_path / "dl")))
    assert yaml.safe_load((got / "config.yaml").read_text("utf-8")) == cfg.model_dump(mode="json")
    assert (got / "report.md").read_text("utf-8") == result.report_path.read_text("utf-8")
    assert pq.read_table(got / pred.path).num_rows == N_ADE
    assert not (tmp_path / "home").exists()
