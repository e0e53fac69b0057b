"""`biorab run` in MLflow: one parent run for the run (the whole config as params) and one child per cell
(its own setting as params), found again by a stable key on rerun; read back with `MlflowClient`."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.common.errors import TrackingError
from biorab.runner import run_experiment
from biorab.tracking.flatten import mlflow_params
from biorab.tracking.mlflow_tracker import default_tracking_uri
from tests.support.local_runs import N_ADE, N_QA, make_config


def tracked(cfg, **tracking: object):  # type: ignore[no-untyped-def]
    return cfg.model_copy(update={"tracking": cfg.tracking.model_copy(update={"enabled": True, **tracking})})


@pytest.mark.slow
def test_parent_and_children_read_back(tmp_path: Path, data_dir: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # proves nothing is written to $HOME
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = tracked(make_config(tmp_path, data_dir, retrieval=[{"testbed": "none"}]))
    result = run_experiment(cfg)
    run_experiment(cfg)  # a rerun reopens the same runs: no duplicates
    assert result.tracking_uri == default_tracking_uri(result.run_dir)
    assert result.tracking_uri == f"sqlite:///{tmp_path}/runs/local/mlflow.db"

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=result.tracking_uri)
    experiment = client.get_experiment_by_name("local")
    assert experiment is not None and experiment.artifact_location.startswith(f"file://{tmp_path}/runs/local/")
    everything = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in everything if "mlflow.parentRunId" not in r.data.tags]
    children = {r.data.tags["dataset"]: r for r in everything if "mlflow.parentRunId" in r.data.tags}
    assert sorted(children) == ["ade_corpus_v2", "medmcqa"] and len(everything) == 3
    assert {r.info.status for r in everything} == {"FINISHED"}
    assert parent.data.params == mlflow_params(cfg.model_dump(mode="json"))  # the shared config, once
    assert parent.data.tags["biorab.kind"] == "run" and "version.mlflow" in parent.data.tags
    ade = children["ade_corpus_v2"]
    assert ade.info.run_name == "fake/ade_corpus_v2-test__none"
    assert ade.data.tags["mlflow.parentRunId"] == parent.info.run_id
    assert {k: ade.data.tags[k] for k in ("task", "retriever", "corpus", "backend")} == {
        "task": "classification", "retriever": "none", "corpus": "none", "backend": "fake"}
    assert ade.data.params["dataset"] == "ade_corpus_v2" and ade.data.params["testbed"] == "none"
    assert ade.data.metrics["accuracy"] == pytest.approx(5 / 6)
    assert ade.data.metrics["ci_low/accuracy"] <= 5 / 6 <= ade.data.metrics["ci_high/accuracy"]
    assert ade.data.tags["ci.accuracy"].startswith("0.833 [")
    assert ade.data.metrics["n"] == N_ADE and children["medmcqa"].data.metrics["n"] == N_QA
    assert ade.data.metrics["generation_failures"] == 0
    assert ade.inputs.dataset_inputs[0].dataset.name == "ade_corpus_v2-test"
    artifacts = {a.path for a in client.list_artifacts(ade.info.run_id)}
    assert artifacts == {"predictions", "predictions.json", "config.yaml"}
    (pred,) = client.list_artifacts(ade.info.run_id, "predictions")
    assert pred.path == f"predictions/{result.cells[0].plan.cell_id}.parquet"
    got = Path(client.download_artifacts(ade.info.run_id, "", str(tmp_path / "dl")))
    assert yaml.safe_load((got / "config.yaml").read_text("utf-8")) == cfg.model_dump(mode="json")
    assert pq.read_table(got / pred.path).num_rows == N_ADE
    assert {a.path for a in client.list_artifacts(parent.info.run_id)} == {
        "config.yaml", "report.md", "summary.json"}
    assert not (tmp_path / "home").exists()


@pytest.mark.slow
def test_environment_tracking_uri_is_honoured(tmp_path: Path, data_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{tmp_path}/elsewhere.db")
    cfg = tracked(make_config(tmp_path, data_dir, retrieval=[{"testbed": "none"}]))
    assert run_experiment(cfg).tracking_uri == f"sqlite:///{tmp_path}/elsewhere.db"


@pytest.mark.slow
def test_unreachable_server_fails_fast_after_results_are_on_disk(tmp_path: Path, data_dir: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = tracked(make_config(tmp_path, data_dir, retrieval=[{"testbed": "none"}]),
                  uri=f"http://127.0.0.1:{port}")
    start = time.monotonic()
    with pytest.raises(TrackingError) as err:
        run_experiment(cfg)
    assert time.monotonic() - start < 60
    assert "not reachable" in str(err.value) and "biorab track" in str(err.value)
    assert (cfg.run_dir() / "summary.json").is_file() and (cfg.run_dir() / "report.md").is_file()

    # `biorab track RUN_DIR` logs the results on disk later, without computing anything
    from mlflow.tracking import MlflowClient

    from biorab.cli.replay_tracking import track_dir

    store = f"sqlite:///{tmp_path}/later.db"
    assert track_dir(cfg.run_dir(), uri=store) == store
    runs = MlflowClient(tracking_uri=store).search_runs(
        [MlflowClient(tracking_uri=store).get_experiment_by_name("local").experiment_id])
    assert len(runs) == 3 and {r.info.status for r in runs} == {"FINISHED"}
