"""Resume is keyed by content: after a fixed gold label and a deleted line in the data, the rerun computes
exactly the changed and the newly included instances, reuses the rows that only moved (under their new
ids), and never scores a stale row."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


def edit_copy(src: Path, dst: Path) -> list[dict[str, object]]:
    shutil.copytree(src / "semclass", dst / "semclass", ignore=shutil.ignore_patterns("raw", "prompts"))
    path = dst / "semclass" / "sentence_triple_test.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_rows(dst: Path, rows: list[dict[str, object]]) -> None:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    (dst / "semclass" / "sentence_triple_test.jsonl").write_text(text, encoding="utf-8")


def test_edited_data_recomputes_exactly_what_changed(tmp_path: Path, data_dir: Path) -> None:
    data = tmp_path / "data"
    rows = edit_copy(data_dir, data)
    cfg = ExperimentConfig.model_validate({
        "name": "content", "data_dir": str(data), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "semclass", "limit": 6}], "retrieval": [{"testbed": "none"}],
        "backend": {"name": "fake", "params": {"mode": "choice"}}, "sampling": {"max_tokens": 4},
        "n_boot": 20, "tracking": {"enabled": False}})
    first = run_experiment(cfg)
    assert first.total_pending == 6
    # fix the gold label of row 2 and delete row 4: rows 5.. move up one position
    edited = [dict(r) for r in rows]
    edited[2]["label"] = "n" if rows[2]["label"] == "y" else "y"
    del edited[4]
    write_rows(data, edited)
    second = run_experiment(cfg)
    # row 2 (new label) and old row 6 (now the 6th instance) are computed; rows 0, 1, 3, 5 are reused
    assert second.total_pending == 2
    (cell,) = second.cells
    preds = pq.read_table(cell.predictions_path).to_pylist()
    assert [p["id"] for p in preds] == [f"semclass/test/{i}" for i in range(6)]
    assert [p["label"] for p in preds] == [str(r["label"]) for r in edited[:6]]
    assert [p["order"] for p in preds] == list(range(6))
    assert second.stats.generated + second.stats.generation_cache_hits == 2
    third = run_experiment(cfg)
    assert third.total_pending == 0
