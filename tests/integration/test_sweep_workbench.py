"""`biorab sweep` as a person follows it and reads it in MLflow: progress per model and per cell, the table
at the end, `--output-dir`; the sweep's table as a table artifact on the parent; and the three searches of
docs/tracking.md finding the right cells (the filter strings the UI's search box sends to search_runs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from biorab.tracking.session import LOGGED_ARTIFACTS, replace_table
from tests.support.cli_runs import biorab

pytestmark = pytest.mark.slow
#: docs/tracking.md, "Finding cells": filter → the cells it finds (run names without the dataset part).
SEARCHES = {
    "params.model = 'a' and params.retriever = 'bm25'": {"a/counterfactual-0.2", "a/counterfactual-1"},
    "params.testbed = 'counterfactual' and params.rate = '0.2'": {"a/counterfactual-0.2",
                                                                  "b/counterfactual-0.2"},
    "tags.corpus = 'counterfactual@1' and metrics.micro_f1 >= 0": {"a/counterfactual-1",
                                                                   "b/counterfactual-1"},
}


def write_sweep(tmp_path: Path, data_dir: Path) -> Path:
    path = tmp_path / "sw.yaml"
    path.write_text(yaml.safe_dump({
        "name": "sw", "output_dir": str(tmp_path / "not-here"), "data_dir": str(data_dir),
        "models": {"a": {"backend": "fake", "params": {"mode": "choice"}},
                   "b": {"backend": "fake", "params": {"mode": "choice", "seed": 1}}},
        "matrix": {"models": ["a", "b"], "datasets": [{"name": "ade_corpus_v2", "limit": 3}],
                   "retrievers": ["none", "bm25"], "testbeds": ["counterfactual"], "rates": [0.2, 1.0]},
        "sampling": {"max_tokens": 8}, "n_boot": 50, "tracking": {"experiment": "sw"},
    }), encoding="utf-8")
    return path


def short(name: str) -> str:
    """``a/ade_corpus_v2-test__counterfactual-0.2-bm25-k1`` → ``a/counterfactual-0.2``."""
    model, cell = name.split("/", 1)
    return f"{model}/{re.sub(r'-bm25.*', '', cell.split('__')[1])}"


def test_sweep_progress_table_and_searches(tmp_path: Path, data_dir: Path) -> None:
    out = biorab("sweep", str(write_sweep(tmp_path, data_dir)), "--no-ray", "--output-dir",
                 str(tmp_path / "runs"), cache=tmp_path / "cache", MLFLOW_TRACKING_URI="")
    assert out.returncode == 0, out.stderr
    sweep_dir = tmp_path / "runs" / "sw"
    assert (sweep_dir / "mlflow.db").is_file() and not (tmp_path / "not-here").exists()
    for model in ("a", "b"):  # plain lines (not a terminal): per model, and per cell, to the last row
        assert f"model {model}: 9/9 rows (100%)" in out.stderr, out.stderr
    assert out.stderr.count("  cell ade_corpus_v2-test__none__noexample: 3/3 rows (100%)") == 2
    # Table 2 ends with the last model's no-retrieval row; the attribution tables follow it.
    table2 = out.stdout[out.stdout.index("### Table 2 shape"):out.stdout.index("### Evidence attribution")]
    assert table2.rstrip().splitlines()[-1].startswith("| b / none / none |")
    assert "| ade_corpus_v2 |" in out.stdout

    from mlflow.tracking import MlflowClient

    client = MlflowClient(f"sqlite:///{sweep_dir / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("sw")
    assert experiment is not None
    everything = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in everything if r.data.tags.get("biorab.kind") == "sweep"]
    assert {"path": "sweep_table.json", "type": "table"} in json.loads(parent.data.tags[LOGGED_ARTIFACTS])
    got = Path(client.download_artifacts(parent.info.run_id, "sweep_table.json", str(tmp_path / "dl")))
    table = json.loads(got.read_text(encoding="utf-8"))
    assert table["columns"][:6] == ["model", "dataset", "task", "retriever", "corpus", "method"]
    rows = [dict(zip(table["columns"], r, strict=True)) for r in table["data"]]
    assert [(r["model"], r["corpus"]) for r in rows] == [
        (m, c) for m in ("a", "b") for c in ("counterfactual (20%)", "counterfactual (100%)", "none")]
    assert all(r["metric"] == "micro_f1" and r["ci_low"] <= r["value"] <= r["ci_high"] for r in rows)
    replace_table(client, parent.info.run_id, "sweep_table.json", {"model": ["x"]})  # a rerun replaces it
    again = Path(client.download_artifacts(parent.info.run_id, "sweep_table.json", str(tmp_path / "dl2")))
    assert json.loads(again.read_text(encoding="utf-8")) == {"columns": ["model"], "data": [["x"]]}

    for filter_string, expected in SEARCHES.items():
        found = client.search_runs([experiment.experiment_id], filter_string=filter_string)
        assert {short(r.info.run_name) for r in found} == expected, filter_string
