"""Order and framing twins across a sweep's runs (issue 43): each matrix block is a run of its own, so an
ordered cell whose retrieved-order twin, or a framed cell whose as-written twin, sits in another block is
paired with it there (`biorab.sweep.twins`), and the rates reach the cell's MLflow child run.

Two fake models on the fixture's Ade-corpus-v2 test sentences:

- ``syc`` (the sycophant: the gold label, unless the query suggests one): its as-written cell (12 rows, no
  retrieval; with a BM25 cell, so another run) in one block, its leading cell (8 rows) in another. By hand:
  every leading query suggests a wrong label and the sycophant answers it, so 8 of 8 answers flip, 8 of 8
  follow the suggestion, and the as-written twin (the gold) follows it in 0 of 8;
- ``last`` (copies the last hit shown): counterfactual 50 %, k = 3, the retrieved order (12 rows) and no
  retrieval in one block, the reversed order (8 rows) in another. Its flip rate is checked against a second
  computation: the same two orders in one block (one run), where the run itself pairs them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.run import run_sweep
from tests.support.attribution_runs import gold_answers

CF = {"retrievers": ["bm25k3"], "testbeds": ["counterfactual"], "rates": [0.5]}
REVERSED = "ade_corpus_v2-test__counterfactual-0.5-bm25-k3-reverse"
LEADING = "ade_corpus_v2-test-leading__none__noexample"


def _sweep(tmp_path: Path, data_dir: Path, name: str, matrix: list[dict[str, Any]], *,
           tracking: bool) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "name": name, "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"syc": {"backend": "fake",
                           "params": {"mode": "sycophant", "answers": gold_answers(data_dir)}},
                   "last": {"backend": "fake", "params": {"mode": "copy_last", "answer": "0"}}},
        "retrievers": {"bm25k3": {"retriever": "bm25", "k": 3, "keep_ties": False}},
        "matrix": matrix, "sampling": {"max_tokens": 16}, "n_boot": 50,
        "tracking": {"enabled": tracking, "uri": f"sqlite:///{tmp_path / 'mlflow.db'}"},
    }), encoding="utf-8")
    return path


def _cells(sweep_dir: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """``model:cell label`` → (run folder name, its summary.json entry)."""
    out = {}
    for summary in sorted(sweep_dir.glob("*/summary.json")):
        for cell in json.loads(summary.read_text(encoding="utf-8"))["cells"]:
            out[f"{summary.parent.name.split('__')[0]}:{cell['cell']}"] = (summary.parent.name, cell)
    return out


def test_order_and_framing_twins_in_other_runs(tmp_path: Path, data_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = _sweep(tmp_path, data_dir, "apart", [
        # a run is a model's set of retrieval settings: the BM25 cell keeps the as-written slice apart
        {"models": ["syc"], "datasets": [{"name": "ade_corpus_v2", "limit": 12}],
         "retrievers": ["none", "bm25k3"]},
        {"models": ["syc"], "datasets": [{"name": "ade_corpus_v2", "limit": 8, "framing": "leading"}]},
        {"models": ["last"], "datasets": [{"name": "ade_corpus_v2", "limit": 12}], **CF,
         "retrievers": ["none", "bm25k3"]},
        {"models": ["last"], "datasets": [{"name": "ade_corpus_v2", "limit": 8}], **CF,
         "orders": ["reverse"]},
    ], tracking=True)
    result = run_sweep(load_sweep(path), path=path)
    assert len(result.runs) == 4
    got = _cells(tmp_path / "runs" / "apart")

    run, leading = got[f"syc:{LEADING}"]
    m = leading["metrics"]
    assert (m["framing_flip_rate"]["value"], m["framing_followed_rate"]["value"],
            m["framing_followed_rate_twin"]["value"]) == (1.0, 1.0, 0.0)  # 8/8, 8/8, 0/8 by hand
    twin_run, twin = got["syc:ade_corpus_v2-test__none__noexample"]
    assert twin_run != run and leading["framing"] == {
        "framing": "leading", "twin_cell_id": twin["cell_id"], "paired": 8, "flipped": 8, "followed": 8}

    run, reversed_ = got[f"last:{REVERSED}"]
    order = reversed_["order"]
    (twin_run,) = [r for r, c in got.values() if c["cell_id"] == order["twin_cell_id"]]
    assert order["paired"] == 8 and twin_run != run
    # its no-retrieval twin is in the other block too (the flips against it, as before)
    assert reversed_["attribution"]["paired"] == 8

    # the second computation: both orders in one run, paired by the run itself
    one = _sweep(tmp_path, data_dir, "together", [
        {"models": ["last"], "datasets": [{"name": "ade_corpus_v2", "limit": 8}], **CF,
         "orders": ["retrieved", "reverse"]}], tracking=False)
    run_sweep(load_sweep(one), path=one)
    _, alone = _cells(tmp_path / "runs" / "together")[f"last:{REVERSED}"]
    assert reversed_["metrics"]["order_flip_rate"] == alone["metrics"]["order_flip_rate"]
    assert order["flipped"] == alone["order"]["flipped"] > 0  # copy_last: the reversed list flips

    # MLflow: the twin rates on each cell's own child run (logged after its run finished)
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}")
    (experiment,) = [e for e in client.search_experiments() if e.name == "apart"]
    children = {r.data.tags["cell_id"]: r for r in client.search_runs([experiment.experiment_id])
                if "cell_id" in r.data.tags}
    framed, ordered = children[leading["cell_id"]], children[reversed_["cell_id"]]
    assert framed.info.status == ordered.info.status == "FINISHED"
    assert framed.data.metrics["framing_flip_rate"] == 1.0
    assert framed.data.metrics["framing_followed_rate_twin"] == 0.0
    flip = reversed_["metrics"]["order_flip_rate"]
    assert ordered.data.metrics["order_flip_rate"] == flip["value"]
    assert ordered.data.metrics["ci_low/order_flip_rate"] == flip["ci_low"]
    assert ordered.data.tags["ci.order_flip_rate"] == \
        f"{flip['value']:.3f} [{flip['ci_low']:.3f}, {flip['ci_high']:.3f}]"
    helped = reversed_["metrics"]["helped_rate"]
    assert ordered.data.metrics["helped_rate"] == helped["value"]
    assert ordered.data.tags["attribution.baseline"] == reversed_["attribution"]["baseline"]
