"""A sweep whose cells score labels, one of them probing: the sweep report's "Robustness beyond the paper"
section shows the abstention table with each cell's summary values (×100) and writes the reliability plot,
whose points are recomputed here from each row's label log-probs (softmax, top label, 10 equal-width bins)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.report import write_report
from biorab.sweep.run import run_sweep


def test_abstention_table_and_reliability_plot(tmp_path: Path, data_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "abstain", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"chooser": {"backend": "fake", "params": {"mode": "choice"}}},
        "retrievers": {"bm25k1": {"retriever": "bm25", "k": 1, "template": "bm25"}},
        "matrix": {"models": ["chooser"], "datasets": [{"name": "ade_corpus_v2", "limit": 8}],
                   "retrievers": ["bm25k1"], "testbeds": ["labeled", "negative_awareness"]},
        "sampling": {"max_tokens": 16, "score_labels": True}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    sweep = load_sweep(path)
    run_sweep(sweep, path=path)
    files = write_report(sweep, path=path, track=False)
    assert any(f.name == "reliability.png" for f in files)
    report = files[0].read_text(encoding="utf-8")
    table = report[report.index("### Robustness beyond the paper: knowing when to abstain"):]
    table = table[:table.index("\n\n", table.index("|---"))]
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| chooser")]
    cells = [c for p in (tmp_path / "runs" / "abstain").glob("*/summary.json")
             for c in json.loads(p.read_text())["cells"]]
    assert len(rows) == len(cells) == 2
    for cell in cells:
        row = next(r for r in rows if cell["testbed"] in r[0])
        ece = cell["metrics"]["selective/ece"]
        assert row[6] == f"{ece['value'] * 100:.1f} [{ece['ci_low'] * 100:.1f}, {ece['ci_high'] * 100:.1f}]"
        gate = cell["metrics"].get("probe_gate/coverage")
        assert (gate is not None) == (cell["testbed"] == "negative_awareness")
        if gate is not None:
            assert row[8].startswith(f"{gate['value'] * 100:.1f} [")
        else:
            assert row[8].startswith("n/a")

    # the reliability plot's points, recomputed from the rows: per cell, per non-empty bin of the top label's
    # probability (softmax over the scored labels; ties: the label first in sorted order), the bin's mean
    # probability, its share of top labels equal to the gold, and its instances
    from biorab.sweep.collect import collect
    from biorab.sweep.robustness_report import reliability_lines

    curves = {name.split(" / ")[2]: (xs, ys, ns) for name, xs, ys, ns in reliability_lines(collect(sweep)[0])}
    assert sorted(curves) == sorted(c["testbed"] for c in cells)
    for cell in cells:
        xs, ys, ns = curves[cell["testbed"]]
        want = _bins(pq.read_table(cell["predictions"]).to_pylist())
        assert sum(ns) == 8 and ns == [n for n, _, _ in want]
        assert xs == pytest.approx([x for _, x, _ in want], abs=1e-12)
        assert ys == pytest.approx([y for _, _, y in want], abs=1e-12)


def _bins(rows: list[dict[str, Any]]) -> list[tuple[int, float, float]]:
    """(instances, mean top probability, share top == gold) per non-empty bin of tenths, in bin order."""
    by_bin: dict[int, list[tuple[float, bool]]] = {}
    for row in rows:
        scores = json.loads(row["gen_label_logprobs"])
        top = max(scores.values())
        total = sum(math.exp(v - top) for v in scores.values())
        label = min(k for k, v in scores.items() if v == top)
        p = 1.0 / total
        by_bin.setdefault(min(int(p * 10), 9), []).append((p, label == row["label"]))
    return [(len(v), sum(p for p, _ in v) / len(v), sum(ok for _, ok in v) / len(v))
            for _, v in sorted(by_bin.items())]
