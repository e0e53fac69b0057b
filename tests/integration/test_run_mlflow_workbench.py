"""What a researcher opens in MLflow after `biorab run`, read back with `MlflowClient`: the experiment is a
runs experiment (kind tag, shared view of the cells' columns), each cell's child has its dataset input,
settings, metric with CI bounds, a per-instance table, and traces of its first instances built from the
rows on disk (retrieve, generate and parse spans), never duplicated by a rerun or `biorab track`."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.cli.replay_tracking import track_dir
from biorab.runner import run_experiment
from biorab.tasks import PRIMARY_METRIC
from biorab.tracking.experiment import parent_key
from biorab.tracking.traces import sample_rows
from biorab.tracking.ui_link import VIEW_TAG, runs_page, view_key
from tests.support.local_runs import N_ADE, N_QA, make_config

pytestmark = pytest.mark.slow
TABLE_COLUMNS = ["id", "input", "gold", "prediction", "parse_status", "retrieved_ids", "output", "error"]


def _traces(store: str, experiment_id: str, run_id: str) -> list:  # type: ignore[type-arg]
    from mlflow.tracing.client import TracingClient

    return list(TracingClient(store).search_traces(locations=[experiment_id], run_id=run_id))


def test_cells_tables_and_traces(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = make_config(tmp_path, data_dir)
    cfg = cfg.model_copy(update={"tracking": cfg.tracking.model_copy(update={"enabled": True, "traces": 2})})
    result = run_experiment(cfg)
    store = result.tracking_uri
    assert store is not None

    from mlflow.tracking import MlflowClient

    client = MlflowClient(store)
    experiment = client.get_experiment_by_name("local")
    assert experiment is not None
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    key = parent_key("run", "local", result.run_dir)
    view = json.loads(experiment.tags[VIEW_TAG + view_key(key)])
    assert view["selectedColumns"][:2] == ["metrics.`micro_f1`", "metrics.`macro_f1`"]
    assert runs_page(store, "local", key) == ("http://127.0.0.1:5000/#/experiments/"
        f"{experiment.experiment_id}/runs?workflowType=machine_learning&viewStateShareKey={view_key(key)}")
    children = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])
                if "cell_id" in r.data.tags}
    assert len(children) == 4, sorted(children)
    bm25 = children["fake/ade_corpus_v2-test__labeled-bm25-k1"]
    assert bm25.data.tags["mlflow.runType"] == "evaluation"
    assert bm25.inputs.dataset_inputs[0].dataset.name == "ade_corpus_v2-test"
    assert {k: bm25.data.params[k] for k in ("retriever", "k", "testbed")} == {
        "retriever": "bm25", "k": "1", "testbed": "labeled"}
    metric = PRIMARY_METRIC["classification"]
    assert bm25.data.metrics["ci_low/" + metric] <= bm25.data.metrics[metric] <= bm25.data.metrics[
        "ci_high/" + metric]

    cell = next(c for c in result.cells if c.plan.cell_id == bm25.data.tags["cell_id"])
    rows = pq.read_table(cell.predictions_path).to_pylist()
    got = Path(client.download_artifacts(bm25.info.run_id, "predictions.json", str(tmp_path / "dl")))
    table = json.loads(got.read_text(encoding="utf-8"))
    assert table["columns"] == TABLE_COLUMNS and len(table["data"]) == N_ADE
    first = dict(zip(TABLE_COLUMNS, table["data"][0], strict=True))
    assert first["id"] == rows[0]["id"] and first["input"] == rows[0]["text"][:300]
    assert first["retrieved_ids"] == " ".join(h["doc_id"] for h in json.loads(rows[0]["hits"]))
    assert first["parse_status"] == ("ok" if rows[0]["pred_ok"] else "unparsed")

    traces = _traces(store, experiment.experiment_id, bm25.info.run_id)
    assert sorted(t.info.tags["biorab.instance"] for t in traces) == [r["id"] for r in rows[:2]]
    trace = next(t for t in traces if t.info.tags["biorab.instance"] == rows[0]["id"])
    spans = {s.name: s for s in trace.data.spans}
    assert set(spans) == {bm25.info.run_name, "retrieve", "generate", "parse"}
    assert [spans[n].span_type for n in ("retrieve", "generate", "parse")] == ["RETRIEVER", "LLM", "PARSER"]
    hits = json.loads(rows[0]["hits"])
    assert [(d["id"], d["metadata"]["score"]) for d in spans["retrieve"].outputs] == [
        (h["doc_id"], h["score"]) for h in hits]
    assert spans["generate"].inputs["messages"][0]["content"] == rows[0]["prompt"]
    assert spans["generate"].outputs["choices"][0]["message"]["content"] == rows[0]["gen_text"]
    assert spans["parse"].outputs["prediction"] == rows[0]["pred_label"]
    none_cell = children["fake/medmcqa-test__none"]
    plain = _traces(store, experiment.experiment_id, none_cell.info.run_id)
    assert len(plain) == 2 and {s.name for s in plain[0].data.spans} == {
        none_cell.info.run_name, "generate", "parse"}  # no retrieval: no retrieve span

    run_experiment(cfg)  # a rerun (nothing to compute) and `biorab track` add no trace
    track_dir(result.run_dir)
    for child in children.values():
        assert len(_traces(store, experiment.experiment_id, child.info.run_id)) == 2
    assert N_QA == 5 and sample_rows(cell.predictions_path, 0) == []
