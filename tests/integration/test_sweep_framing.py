"""A sweep with framed dataset slices on the sycophant fake: `biorab plan` plans the framed cells and, after
the run, finds every generation cached (it rendered the framed prompts as the run did); the report's
query-framing table shows each framed cell's summary values (the sycophant follows every leading
suggestion: 100 %, by hand) and its plot draws those flip rates (leading 100 %, the others 0 %)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import plan_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep
from tests.support.attribution_runs import gold_answers


def test_framing_planned_run_and_reported(tmp_path: Path, data_dir: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "framing", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"syc": {"backend": "fake",
                           "params": {"mode": "sycophant", "answers": gold_answers(data_dir)}}},
        "matrix": {"models": ["syc"], "retrievers": ["none", "bm25"], "testbeds": ["labeled"],
                   "datasets": [{"name": "ade_corpus_v2", "limit": 12, "framing": f}
                                for f in ("none", "abbreviations", "typos", "leading")]},
        "sampling": {"max_tokens": 16}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    before = plan_sweep(sweep, path=path)
    assert before.errors == [] and before.cells == 8
    assert run_sweep(sweep, path=path).cells == 8
    assert plan_sweep(sweep, path=path).new_generations == 0
    files = write_report(sweep, path=path, track=False)
    assert any(f.name == "framing_flip_rate.png" for f in files)
    report = files[0].read_text(encoding="utf-8")
    assert report.index("## Robustness beyond the paper") < report.index("### Table")
    table = report[report.index("### Robustness beyond the paper: query framing"):]
    table = table[:table.index("\n\n", table.index("|---"))]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in table.splitlines()
            if line.startswith("| syc")]
    (summary,) = (tmp_path / "runs" / "framing").glob("*/summary.json")
    framed = [c for c in json.loads(summary.read_text())["cells"] if "framing_flip_rate" in c["metrics"]]
    assert len(rows) == len(framed) == 6
    shown = {(r[1], r[0].split(" / ")[1]): r for r in rows}
    for cell in framed:
        framing = cell["cell"].split("__")[0].rsplit("-", 1)[1]
        row = shown[(framing, "bm25" if cell["testbed"] != "none" else "none")]
        v = cell["metrics"]["framing_flip_rate"]
        assert row[2] == f"{v['value'] * 100:.1f} [{v['ci_low'] * 100:.1f}, {v['ci_high'] * 100:.1f}]"
        if framing == "leading":
            assert row[5].startswith("100.0") and row[6].startswith("0.0")  # by hand: follows every one
        else:
            assert row[2].startswith("0.0") and row[5] == "n/a"
    # the plot's bars: one group per (model, retriever, corpus, dataset), one bar per framing, each the
    # framed cell's flip rate as summary.json has it; by hand, the sycophant flips every leading answer only
    from biorab.sweep.collect import collect
    from biorab.sweep.robustness_report import framing_bars

    groups, framings = framing_bars(collect(sweep, path=path)[0])
    assert sorted(framings) == ["abbreviations", "leading", "typos"] and len(groups) == 2
    drawn = {(group.split(" / ")[1], f): v for group, bars in groups.items() for f, v in bars.items()}
    assert drawn == {(shown_key[1], shown_key[0]): next(
        c["metrics"]["framing_flip_rate"] for c in framed
        if c["cell"].split("__")[0].endswith("-" + shown_key[0])
        and (c["testbed"] != "none") == (shown_key[1] == "bm25")) for shown_key in shown}
    assert {k: v["value"] for k, v in drawn.items()} == {
        (r, f): 1.0 if f == "leading" else 0.0 for r in ("none", "bm25") for f in framings}
