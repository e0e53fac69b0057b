"""A counterfactual sweep (rates 0.2 / 0.8 / 1.0, with the no-retrieval twin) on the copying and the gold
fakes, in-process, then `write_report`: the attribution table, the error-type table and the dose-response
plot: the copying model is misled on every instance with corrupted evidence at every rate (more of them as
the rate grows), the gold one never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep
from tests.support.attribution_runs import gold_answers

pytestmark = pytest.mark.slow


def test_sweep_report_attribution_and_dose_response(tmp_path: Path, data_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "dose", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"copy": {"backend": "fake", "params": {"mode": "copy_top"}},
                   "gold": {"backend": "fake", "params": {"mode": "map", "answers": gold_answers(data_dir)}}},
        "matrix": {"models": ["copy", "gold"], "datasets": [{"name": "ade", "limit": 12}],
                   "retrievers": ["none", "bm25"], "testbeds": ["counterfactual"], "rates": [0.2, 0.8, 1.0]},
        "sampling": {"max_tokens": 64}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    assert run_sweep(sweep, path=path).cells == 8
    files = write_report(sweep, path=path, track=False)
    report = files[0].read_text(encoding="utf-8")
    assert any(f.name == "misled_vs_counterfactual_rate.png" for f in files)
    table = report[report.index("### Evidence attribution"):report.index("### Against the same model")]
    misled = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[1] for line in table.splitlines()
              if line.startswith("| copy /") or line.startswith("| gold /")}
    assert set(misled) == {f"{m} / bm25 / counterfactual ({r}%) / ade" for m in ("copy", "gold")
                           for r in (20, 80, 100)}
    assert misled["copy / bm25 / counterfactual (100%) / ade"].startswith("100.0 [100.0, 100.0]")
    assert all(v.startswith("0.0 [0.0, 0.0]") for k, v in misled.items() if k.startswith("gold"))
    # What the plot draws for the copier, read back from its run's summary: (misled rate, instances whose
    # evidence holds a corrupted item) by rate. It follows every corrupted top hit (a corrupted triple is
    # never gold), so its rate is 1 at every dose; the dose moves the denominator.
    (summary,) = [p for p in (tmp_path / "runs" / "dose").glob("*/summary.json") if "copy" in p.parent.name]
    drawn = {cell["cell"].split("__")[1]: (cell["metrics"]["misled_rate"]["value"],
                                          cell["attribution"]["with_corrupted"])
             for cell in json.loads(summary.read_text())["cells"] if cell["testbed"] == "counterfactual"}
    assert drawn == {"counterfactual-0.2-bm25-k1": (1.0, 4), "counterfactual-0.8-bm25-k1": (1.0, 11),
                     "counterfactual-1-bm25-k1": (1.0, 12)}
    # The plot's data: beside that flat conditional line, the share of all 12 instances grows with the dose
    # (4, 11, 12 of 12), and against the twin (which sees no example and answers nothing) all of it is
    # excess; the evidence-blind gold model has no excess at any dose.
    from biorab.sweep.attribution_report import dose_response_data
    from biorab.sweep.collect import collect

    lines = dose_response_data(collect(sweep, path=path)[0])
    copy, gold = lines[("copy", "ade")], lines[("gold", "ade")]
    assert [p.rate for p in copy] == [20.0, 80.0, 100.0]
    assert [p.share[0] for p in copy] == pytest.approx([100 * 4 / 12, 100 * 11 / 12, 100.0])
    assert [p.conditional[0] for p in copy] == [100.0] * 3 and [p.excess[0] for p in copy] == [100.0] * 3
    assert [p.excess[0] for p in gold] == [0.0] * 3 and [p.share[0] for p in gold] == [0.0] * 3
