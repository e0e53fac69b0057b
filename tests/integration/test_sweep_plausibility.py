"""Near vs far lies on Hetionet (link prediction, many relations) with a plausibility-sensitive fake: it
keeps its prior (the gold) unless the top example's label is the relation most confusable with its prior,
computed here a second way (scikit-learn's bag of words and cosine). Its answers and misled counts are
recomputed from the rows; it is misled more by near lies than by far ones at the same rate, and the
report's plausibility table and plot show it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from biorab.datasets import load_dataset
from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import plan_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep

N = 12


def _near_map(data_dir: Path) -> dict[str, str]:
    """Each training relation → the other relation whose training texts' bag of words is most similar."""
    train = load_dataset("hetionet", "train", data_dir=data_dir)
    labels = sorted({ex.label for ex in train})
    vectorizer = CountVectorizer(token_pattern=r"\w+", lowercase=True)
    counts = vectorizer.fit_transform([ex.text for ex in train]).toarray()
    bags = np.stack([counts[[i for i, ex in enumerate(train) if ex.label == lab]].sum(axis=0)
                     for lab in labels])
    sim = cosine_similarity(bags)
    np.fill_diagonal(sim, -1.0)
    return {lab: labels[int(np.argmax(sim[i]))] for i, lab in enumerate(labels)}


def test_near_lies_mislead_a_plausibility_sensitive_model_more(tmp_path: Path, data_dir: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    near = _near_map(data_dir)
    gold = {ex.id: ex.label for ex in load_dataset("hetionet", "test", data_dir=data_dir)[:N]}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "plaus", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"plausible": {"backend": "fake", "params": {
            "mode": "copy_plausible", "answers": gold, "plausible": {a: [b] for a, b in near.items()}}}},
        "retrievers": {"bm1": {"retriever": "bm25", "k": 1}},
        "matrix": {"models": ["plausible"], "datasets": [{"name": "hetionet", "limit": N}],
                   "retrievers": ["bm1"], "testbeds": ["counterfactual", "counterfactual_near",
                                                       "counterfactual_far"], "rates": [1.0]},
        "sampling": {"max_tokens": 16}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    planned = plan_sweep(sweep, path=path)  # `biorab plan`: the near and far corpora are planned too
    assert planned.errors == [] and planned.cells == 3
    assert run_sweep(sweep, path=path).cells == 3
    assert plan_sweep(sweep, path=path).new_generations == 0
    (summary_path,) = (tmp_path / "runs" / "plaus").glob("*/summary.json")
    cells = {c["testbed"]: c for c in json.loads(summary_path.read_text())["cells"]}
    misled = {}
    for testbed, cell in cells.items():
        rows = pq.read_table(cell["predictions"]).to_pylist()
        followed = 0
        for row in rows:
            top = json.loads(row["hits"])[0]["value"]
            # every top hit is a lie at rate 1; the model follows it only when it is near its prior
            want = top if top == near.get(gold[row["id"]]) else gold[row["id"]]
            assert row["pred_label"] == want
            followed += want != gold[row["id"]]
        assert cell["attribution"]["misled"] == followed
        misled[testbed] = cell["metrics"]["misled_rate"]["value"]
    # direction, pinned: near lies are followed at least as often as uniform ones, far ones least
    assert misled["counterfactual_near"] > misled["counterfactual_far"]
    assert misled["counterfactual_near"] >= misled["counterfactual"] >= misled["counterfactual_far"]
    # pinned on the fixture (12 Hetionet test pairs, BM25 top-1, rate 100 %): 6 of 12 near lies followed
    assert misled == {"counterfactual": 0.0, "counterfactual_near": 0.5, "counterfactual_far": 0.0}
    files = write_report(sweep, path=path, track=False)
    report = files[0].read_text(encoding="utf-8")
    assert any(f.name == "misled_by_plausibility.png" for f in files)
    table = report[report.index("### Robustness beyond the paper: plausibility"):]
    (row,) = [line for line in table.splitlines()
              if line.startswith("| plausible / bm1 / hetionet / rate 100%")]
    cols = [c.strip() for c in row.strip("|").split("|")]
    v = {k: cells[k]["metrics"]["misled_rate"] for k in cells}
    kinds_of = ("counterfactual", "counterfactual_near", "counterfactual_far")
    for col, kind in zip(cols[1:4], kinds_of, strict=True):
        value, low, high = (v[kind][k] * 100 for k in ("value", "ci_low", "ci_high"))
        assert col == f"{value:.1f} [{low:.1f}, {high:.1f}]"
    assert cols[4] == f"{(misled['counterfactual_near'] - misled['counterfactual_far']) * 100:+.1f}"
    # the plot's bars: one group, uniform / near / far, each the cell's misled rate (0, 6/12 and 0, above)
    from biorab.sweep.collect import collect
    from biorab.sweep.robustness_report import plausibility_bars

    bars, kinds = plausibility_bars(collect(sweep, path=path)[0])
    assert kinds == ["random", "near", "far"]
    assert bars == {"plausible / bm1 / hetionet / rate 100%": {
        name: v[kind] for name, kind in zip(kinds, kinds_of, strict=True)}}
    assert {k: x["value"] for k, x in bars["plausible / bm1 / hetionet / rate 100%"].items()} == {
        "random": 0.0, "near": 0.5, "far": 0.0}
