"""Evidence attribution on a counterfactual run with the fake backend (issue 32's done condition): each
cell's `misled_rate` equals the share recomputed here from the rows' hits and the ledger files; the
copying fake is misled wherever its top hit is corrupted (and the corruption is not the gold), the gold
fake never."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from biorab.attribution.cells import ATTRIBUTION_FILE, ATTRIBUTION_SCHEMA
from biorab.corpora import build_corpus, write_corpus
from biorab.runner import run_experiment
from tests.support.attribution_runs import COPY_TOP, RATE, attribution_config, gold_answers


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def _ledger(tmp_path: Path, data_dir: Path, dataset: str) -> dict[str, dict[str, Any]]:
    """The testbed's ledger as the files on disk hold it (``ledger.jsonl``), read back line by line."""
    folder = write_corpus(*build_corpus("counterfactual", dataset, rate=RATE, seed=0, data_dir=data_dir),
                          tmp_path / "ledgers" / dataset)
    lines = (folder / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["item_id"]: row for row in map(json.loads, lines)}


def _items(task: str, label: str | None) -> set[str]:
    """Answer items, written out here: one label, or each triple lower-cased with its spaces collapsed."""
    if not label:
        return set()
    if task != "triple_extraction":
        return {label}
    return {"|".join(" ".join(p.lower().split()) for p in line.split("|")) for line in label.split("\n")}


def _misled(row: dict[str, Any], ledger: dict[str, dict[str, Any]]) -> tuple[bool, bool, bool]:
    """(evidence holds a corrupted item, the answer follows one, the top hit is a corruption ≠ the gold)."""
    task, gold = row["task"], _items(row["task"], row["label"])
    answer = _items(task, row["pred_label"]) if row["pred_ok"] else set()
    hits = json.loads(row["hits"] or "[]")
    bad = [h for h in hits if h["doc_id"] in ledger and h["value"] is not None
           and h["value"] != ledger[h["doc_id"]]["original"]]
    wrong = [(_items(task, h["value"]) - _items(task, ledger[h["doc_id"]]["original"])) - gold for h in bad]
    top_bad = bool(hits) and bool(bad) and hits[0]["doc_id"] == bad[0]["doc_id"] and bool(wrong[0])
    return bool(bad), any(answer & w for w in wrong), top_bad


def _cells(result: Any) -> dict[str, Any]:
    return {c.plan.cell_id: c for c in result.cells}


def test_copying_fake_misled_rate_recomputed_from_rows_and_ledger(tmp_path: Path, data_dir: Path) -> None:
    config = attribution_config(tmp_path, data_dir, COPY_TOP)
    result = run_experiment(config)
    counts = {}
    for cell in result.cells:
        dataset = cell.plan.dataset
        table = pq.read_table(result.run_dir / "cells" / cell.plan.cell_id / ATTRIBUTION_FILE)
        assert table.schema.equals(ATTRIBUTION_SCHEMA)
        attribution = {r["id"]: r for r in table.to_pylist()}
        rows = pq.read_table(cell.predictions_path).to_pylist()
        assert [r["id"] for r in rows] == list(attribution)
        if not cell.plan.retrieves:
            assert "misled_rate" not in cell.metrics
            assert {r["flip"] for r in attribution.values()} == {None}
            continue
        ledger = _ledger(tmp_path, data_dir, dataset)
        flags = [_misled(r, ledger) for r in rows]
        held = sum(f[0] for f in flags)
        misled = sum(f[1] for f in flags)
        assert held > 0
        assert cell.metrics["misled_rate"]["value"] == pytest.approx(misled / held)
        # The copying fake follows every corrupted top hit whose label is not the gold.
        top_bad = [r["id"] for r, f in zip(rows, flags, strict=True) if f[2]]
        assert top_bad and all(attribution[i]["followed_corruption"] for i in top_bad)
        assert cell.metrics["copy_rate_corrupted"]["value"] == 1.0
        assert cell.metrics["copy_rate_clean"]["value"] == 1.0
        for row in rows:  # every hit tagged, in order, and the flag agrees with the independent one
            tags = json.loads(attribution[row["id"]]["hit_tags"])
            assert [t["doc_id"] for t in tags] == [h["doc_id"] for h in json.loads(row["hits"])]
            assert attribution[row["id"]]["followed_corruption"] == _misled(row, ledger)[1]
        twin = attribution[rows[0]["id"]]["twin_cell_id"]
        assert twin in _cells(result) and not _cells(result)[twin].plan.retrieves
        assert {r["flip"] for r in attribution.values()} <= {"helped", "hurt", "unchanged"}
        extra = cell.extra["attribution"]
        counts[dataset] = (held, misled, extra["helped"], extra["hurt"])
    # Pinned on the fixture data (12 instances per dataset, BM25 top-1 over the 0.8 counterfactual corpus).
    assert counts == {"ade_corpus_v2": (9, 7, 3, 0), "medmcqa": (10, 9, 1, 0), "ade": (11, 11, 0, 0)}
    report = result.report_path.read_text()
    main, attribution = report.split("## Evidence attribution")
    assert "misled" not in main  # the attribution rates have their own table, not 7 more rows per cell
    assert "| ade-test__counterfactual-0.8-bm25-k1 | 11 / 12 | 1.000 [1.000, 1.000] | 0.000 [" in attribution
    assert "| ade_corpus_v2-test__counterfactual-0.8-bm25-k1 | 9 / 12 | 0.778 [" in attribution
    assert "Error types of triple_extraction (the paper's are §2.8, Table 7's)" in attribution
    summary = json.loads((result.run_dir / "summary.json").read_text())
    triples = next(c for c in summary["cells"] if c["task"] == "triple_extraction" and c["testbed"] != "none")
    assert triples["attribution"]["with_corrupted"] == 11
    assert sum(triples["attribution"]["error_types"].values()) > 0
    assert triples["metrics"]["flip_mcnemar_p"]["value"] == 1.0
    assert any(name.startswith("error_rate/") for name in triples["metrics"])

    # A resumed run (every row on disk, nothing generated) writes the same attribution from the rows alone.
    files = sorted((result.run_dir / "cells").glob(f"*/{ATTRIBUTION_FILE}"))
    before = [pq.read_table(f).to_pylist() for f in files]
    for f in files:
        f.unlink()
    again = run_experiment(config)
    assert again.stats.generated == 0 and again.total_pending == 0
    assert [pq.read_table(f).to_pylist() for f in files] == before


def test_gold_fake_is_never_misled(tmp_path: Path, data_dir: Path) -> None:
    backend = {"mode": "map", "answers": gold_answers(data_dir)}
    result = run_experiment(attribution_config(tmp_path, data_dir, backend))
    retrieving = [c for c in result.cells if c.plan.retrieves]
    assert len(retrieving) == 3
    for cell in retrieving:
        assert cell.metrics["misled_rate"]["value"] == 0.0
        assert cell.metrics["resisted_rate"]["value"] == 1.0
        assert cell.metrics["helped_rate"]["value"] == 0.0 and cell.metrics["hurt_rate"]["value"] == 0.0
        assert cell.extra["attribution"]["mcnemar"]["p_value"] == 1.0
    triples = next(c for c in retrieving if c.plan.task == "triple_extraction")
    assert set(triples.extra["attribution"]["error_types"].values()) == {0}
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert all("misled_rate" in c["metrics"] for c in summary["cells"] if c["testbed"] != "none")
