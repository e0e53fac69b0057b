"""A sweep on the thinking-budget axis (issue 43 item 5a, 5c): the copying fake (k = 1) whose reasoning is
"the evidence says {answer}" quotes every corrupted label it copies; with a budget of 2 words its reasoning is
cut to "the evidence" and quotes none. `biorab plan` plans both settings, after the run it finds every
generation cached, and the sweep report's reasoning table shows each setting with its denominator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import plan_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep


def test_budget_twins_planned_run_and_reported(tmp_path: Path, data_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "think", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"copier": {"backend": "fake", "params": {
            "mode": "copy_top", "think": "the evidence says {answer}", "thinking": {"split": True}}}},
        "retrievers": {"bm25k1": {"retriever": "bm25", "k": 1, "template": "bm25"}},
        "matrix": {"models": ["copier"], "datasets": [{"name": "ade_corpus_v2", "limit": 12}],
                   "retrievers": ["bm25k1"], "testbeds": ["counterfactual"], "rates": [0.8],
                   "thinking_budgets": [None, 2]},
        "sampling": {"max_tokens": 16}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    before = plan_sweep(sweep, path=path)
    assert before.errors == [] and before.cells == 2
    by = {m.model: m for m in before.models}
    # 12 rows each; ≤ 16 decode tokens per answer, plus the 2-token budget
    assert by["copier"].new_decode_tokens == 12 * 16 and by["copier [budget=2]"].new_decode_tokens == 12 * 18
    assert run_sweep(sweep, path=path).cells == 2
    assert plan_sweep(sweep, path=path).new_generations == 0
    summaries = {p.parent.name: json.loads(p.read_text())["cells"][0]
                 for p in (tmp_path / "runs" / "think").glob("*/summary.json")}
    assert sorted(summaries) == ["copier", "copier__think2"]
    full, cut = summaries["copier"], summaries["copier__think2"]
    r = full["attribution"]["with_misleading"]
    assert r > 0 and full["attribution"]["reasoning"]["misleading_with_reasoning"] == r
    assert full["metrics"]["named_lie_followed_rate"]["value"] == 1.0  # k = 1: copies and quotes every lie
    assert cut["metrics"]["named_lie_followed_rate"]["value"] == 0.0  # "the evidence": quotes nothing
    assert cut["metrics"]["misled_rate"]["value"] == 1.0  # the same answers: only the reasoning changed
    report = write_report(sweep, path=path, track=False)[0].read_text(encoding="utf-8")
    table = report[report.index("Reasoning against misleading evidence"):]
    assert f"| copier / bm25k1 / counterfactual (80%) / ade_corpus_v2 | {r} | 100.0" in table
    assert f"| copier [budget=2] / bm25k1 / counterfactual (80%) / ade_corpus_v2 | {r} | 0.0" in table
    # the budget twins, paired: the same answers (only the reasoning was cut): no flip, no difference
    twins = report[report.index("### Reasoning twins"):report.index("### Table")]
    pair = ("| copier [budget=2] vs copier / bm25k1 / counterfactual (80%) / ade_corpus_v2 | 12 "
            "| 0.0 [0.0, 0.0] |")
    assert pair in twins
    assert "| 0.0 [0.0, 0.0] | 1.000 |" in twins  # no discordant pair: McNemar's exact p is 1
    # the section's reasoning plot: per thinking cell its misled rate (1: k = 1, it copies every lie), the
    # quoted share and the named-the-lie-and-followed share (1 in full, 0 cut to "the evidence"), as
    # summary.json has them
    from biorab.sweep.collect import collect
    from biorab.sweep.robustness_report import reasoning_bars

    groups, bars = reasoning_bars(collect(sweep, path=path)[0])
    assert bars == ["misled", "quoted corruption", "named the lie and followed it"]
    metrics = {"misled": "misled_rate", "quoted corruption": "quoted_corruption_rate",
               "named the lie and followed it": "named_lie_followed_rate"}
    by_label = {"copier / bm25k1 / counterfactual (80%) / ade_corpus_v2": full,
                "copier [budget=2] / bm25k1 / counterfactual (80%) / ade_corpus_v2": cut}
    assert groups == {label: {bar: s["metrics"][m] for bar, m in metrics.items()}
                      for label, s in by_label.items()}
    assert {label: [v["value"] for v in g.values()] for label, g in groups.items()} == {
        "copier / bm25k1 / counterfactual (80%) / ade_corpus_v2": [1.0, 1.0, 1.0],
        "copier [budget=2] / bm25k1 / counterfactual (80%) / ade_corpus_v2": [1.0, 0.0, 0.0]}
    assert "![reasoning](reasoning.png)" in report[:report.index("### Table")]


def test_a_reasoning_run_never_borrows_the_plain_runs_twin(tmp_path: Path, data_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The no-retrieval cell is only in the budget-free run: the budget run's retrieving cell has no twin
    (its model's params differ), while the budget-free run's has its own."""
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    ds = [{"name": "ade_corpus_v2", "limit": 6}]
    path.write_text(yaml.safe_dump({
        "name": "twin", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"copier": {"backend": "fake", "params": {
            "mode": "copy_top", "think": "the evidence says {answer}", "thinking": {"split": True}}}},
        "retrievers": {"bm25k1": {"retriever": "bm25", "k": 1, "template": "bm25"}},
        "matrix": [{"models": ["copier"], "datasets": ds, "retrievers": ["none"]},
                   {"models": ["copier"], "datasets": ds, "retrievers": ["bm25k1"],
                    "testbeds": ["counterfactual"], "rates": [0.8], "thinking_budgets": [None, 2]}],
        "sampling": {"max_tokens": 16}, "n_boot": 20, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    run_sweep(sweep, path=path)
    baselines = {}
    for p in (tmp_path / "runs" / "twin").glob("*/summary.json"):
        for cell in json.loads(p.read_text())["cells"]:
            if "baseline" in (cell.get("attribution") or {}):
                baselines[p.parent.name] = cell["attribution"]["baseline"]
    assert baselines["copier__think2"] == "no baseline"
    assert baselines["copier"] != "no baseline"
