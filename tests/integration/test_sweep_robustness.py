"""A sweep with the evidence-order axis on the fake backend: `biorab plan` plans every ordered cell, and
after the sweep has run it finds every hit and every generation in the caches (so it rendered each
ordered prompt exactly as the run did); the report opens with "Robustness beyond the paper", whose table
shows each cell's summary values and whose plot is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import plan_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep

ORDERS = ["retrieved", "reverse", "misleading_first", "misleading_last"]


def test_order_axis_planned_run_and_reported(tmp_path: Path, data_dir: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "order", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"last": {"backend": "fake", "params": {"mode": "copy_last"}},
                   "fixed": {"backend": "fake", "params": {"mode": "fixed", "answer": "0"}}},
        "retrievers": {"bm25k3": {"retriever": "bm25", "k": 3, "template": "bm25"}},
        "matrix": {"models": ["last", "fixed"], "datasets": [{"name": "ade_corpus_v2", "limit": 12}],
                   "retrievers": ["bm25k3"], "testbeds": ["counterfactual", "labeled"], "rates": [0.5],
                   "orders": ORDERS},
        "sampling": {"max_tokens": 16}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    # counterfactual: 4 orders; labeled: the misleading orders do not apply (retrieved, reverse); × 2 models
    before = plan_sweep(sweep, path=path)
    assert before.errors == [] and before.cells == 2 * (4 + 2)
    assert run_sweep(sweep, path=path).cells == 12
    after = plan_sweep(sweep, path=path)
    assert after.new_retrieval_keys == 0 and after.new_generations == 0  # every ordered prompt predicted
    files = write_report(sweep, path=path, track=False)
    report = files[0].read_text(encoding="utf-8")
    assert any(f.name == "order_flip_rate.png" for f in files)
    section = report.index("## Robustness beyond the paper")
    assert section < report.index("### Table")  # the report opens with it, before the paper's tables
    table = report[report.index("### Robustness beyond the paper: evidence order"):]
    table = table[:table.index("\n\n", table.index("|---"))]
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in table.splitlines()
            if line.startswith("| last") or line.startswith("| fixed")}
    summaries = {p.parent.name: json.loads(p.read_text())
                 for p in (tmp_path / "runs" / "order").glob("*/summary.json")}
    shown = 0
    for run, summary in summaries.items():
        model = "last" if "last" in run else "fixed"
        for cell in summary["cells"]:
            v = cell["metrics"].get("order_flip_rate")
            if v is None:
                continue
            order = _order_of(cell["cell"])
            row = rows[f'{model} / bm25k3 / {_corpus(cell)} / ade_corpus_v2 / order "{order}"']
            assert row[1] == _order_of(cell["cell"])
            assert row[2].startswith(f"{v['value'] * 100:.1f} [{v['ci_low'] * 100:.1f}, "
                                     f"{v['ci_high'] * 100:.1f}]")
            if model == "fixed":
                assert v["value"] == 0.0  # order-insensitive: never flips
            shown += 1
    assert shown == 2 * (3 + 1)  # every ordered cell of both models
    # the plot's bars: one group per (model, corpus), one bar per order that is not the retrieved one,
    # each the cell's flip rate as summary.json has it
    from biorab.sweep.collect import collect
    from biorab.sweep.robustness_report import order_bars

    groups, orders = order_bars(collect(sweep, path=path)[0])
    assert sorted(orders) == sorted(ORDERS[1:])
    drawn = {(group.split(" / ")[0], group.split(" / ")[3], order): v["value"]
             for group, bars in groups.items() for order, v in bars.items() if v is not None}
    want = {("last" if "last" in run else "fixed", _corpus(cell), _order_of(cell["cell"])):
            cell["metrics"]["order_flip_rate"]["value"]
            for run, summary in summaries.items() for cell in summary["cells"]
            if "order_flip_rate" in cell["metrics"]}
    assert drawn == want and len(drawn) == shown


def _order_of(cell: str) -> str:
    tail = cell.split("__")[1]
    return next((o for o in ORDERS[1:] if tail.endswith("-" + o)), "retrieved")


def _corpus(cell: dict[str, object]) -> str:
    return "counterfactual (50%)" if cell["testbed"] == "counterfactual" else "labeled"
