"""A retrieving cell whose no-retrieval twin is in another run of the sweep (another matrix block of the
same model) gets its flip: a fake-backend sweep over the fixture ADE corpus v2 with the no-retrieval cell at
12 rows in one block, counterfactual 80% at 8 rows in a second (its instances are the first 8 of the twin's
12) and labeled at 20 rows in a third (the twin lacks 8 of its instances: no twin, no flip). The helped and
hurt rates in summary.json equal those recomputed here from both cells' rows, and a resumed sweep writes the
same attribution again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.run import run_sweep

NONE = "ade_corpus_v2-test__none__noexample"
CF = "ade_corpus_v2-test__counterfactual-0.8-bm25-k1"
LABELED = "ade_corpus_v2-test__labeled-bm25-k1"


def sweep_file(tmp_path: Path, data_dir: Path) -> Path:
    def block(limit: int, retriever: str, testbeds: list[str], rates: list[float]) -> dict[str, Any]:
        return {"models": ["fake"], "datasets": [{"name": "ade_corpus_v2", "limit": limit}],
                "retrievers": [retriever], "testbeds": testbeds, "rates": rates}

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "twins", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"fake": {"backend": "fake", "params": {"mode": "choice"}}},
        "retrievers": {"bm25": {"retriever": "bm25", "k": 1}},
        "matrix": [block(12, "none", ["none"], []), block(8, "bm25", ["counterfactual"], [0.8]),
                   block(20, "bm25", ["labeled"], [])],
        "sampling": {"max_tokens": 4}, "n_boot": 50, "tracking": {"enabled": False},
    }), encoding="utf-8")
    return path


def cells(sweep_dir: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Each cell label → (its run dir, its summary.json entry); the three cells are in three runs."""
    out = {}
    for summary in sorted(sweep_dir.glob("*/summary.json")):
        for cell in json.loads(summary.read_text(encoding="utf-8"))["cells"]:
            assert cell["cell"] not in out
            out[cell["cell"]] = (summary.parent, cell)
    return out


def attribution(cell: tuple[Path, dict[str, Any]]) -> list[dict[str, Any]]:
    run_dir, entry = cell
    return pq.read_table(run_dir / "cells" / entry["cell_id"] / "attribution.parquet").to_pylist()


def test_twin_in_another_block(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = sweep_file(tmp_path, data_dir)
    result = run_sweep(load_sweep(path), path=path)
    assert (len(result.runs), result.cells) == (3, 3)
    got = cells(tmp_path / "runs" / "twins")
    assert set(got) == {NONE, CF, LABELED} and len({run for run, _ in got.values()}) == 3

    twin_rows = {r["id"]: r for r in attribution(got[NONE])}
    rows = attribution(got[CF])
    assert len(twin_rows) == 12 and len(rows) == 8 and {r["id"] for r in rows} <= set(twin_rows)
    assert {r["twin_cell_id"] for r in rows} == {got[NONE][1]["cell_id"]}
    # recomputed here from both cells' verdicts (a parse failure or no verdict counts as wrong)
    flips = ["helped" if r["correct"] and not twin_rows[r["id"]]["correct"] else
             "hurt" if twin_rows[r["id"]]["correct"] and not r["correct"] else "unchanged" for r in rows]
    assert [r["flip"] for r in rows] == flips
    metrics = got[CF][1]["metrics"]
    assert metrics["helped_rate"]["value"] == flips.count("helped") / 8
    assert metrics["hurt_rate"]["value"] == flips.count("hurt") / 8
    assert got[CF][1]["attribution"]["paired"] == 8
    assert metrics["flip_mcnemar_p"]["value"] is not None
    assert (flips.count("helped"), flips.count("hurt")) == (1, 5)  # pinned: the fake's seeded choices
    # the run's report.md is rewritten with them: the last three columns of the cell's attribution row
    report = (got[CF][0] / "report.md").read_text(encoding="utf-8")
    table = report[report.index("| helped | hurt | McNemar p | Holm p |"):]
    row = next(line for line in table.splitlines() if line.startswith(f"| {CF} | "))
    helped, hurt, p, holm = [c.strip() for c in row.strip("|").split("|")][-4:]
    assert helped.startswith(f"{1 / 8:.3f} [") and hurt.startswith(f"{5 / 8:.3f} [")
    assert p == f"{metrics['flip_mcnemar_p']['value']:.3f}" and float(holm) >= float(p)
    # and its twin table names the twin from the other run instead of "no baseline"
    assert f"| {CF} | {got[NONE][1]['cell_id']} | " in report
    # the claim diagnostics' self-knowledge split is made against that twin too; the cell without one has none
    assert metrics["claims/self_knowledge_knew_it"]["value"] is not None
    assert "claims/self_knowledge_knew_it" not in got[LABELED][1]["metrics"]
    assert "claims/self_knowledge" in got[LABELED][1]["metrics"]

    # the 20-row cell: the 12-row twin does not hold all its instances, so no twin
    wide = attribution(got[LABELED])
    assert len(wide) == 20 and {(r["flip"], r["twin_cell_id"]) for r in wide} == {(None, None)}
    assert "helped_rate" not in got[LABELED][1]["metrics"]

    # resumable and idempotent: a rerun of the sweep writes the same attribution and metrics
    run_sweep(load_sweep(path), path=path)
    again = cells(tmp_path / "runs" / "twins")
    assert attribution(again[CF]) == rows
    assert {k: (v[1]["metrics"], v[1].get("attribution")) for k, v in again.items()} == {
        k: (v[1]["metrics"], v[1].get("attribution")) for k, v in got.items()}
