"""Reasoning twins (issue 43 item 5b): a cell with a reasoning setting is paired with its model's cell
without one, and the table shows the answer-flip rate and the metric difference, pinned by hand."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from biorab.sweep.collect import CellRecord
from biorab.sweep.reasoning_twins import reasoning_twin_grids, twin_pairs

GOLDS = ["1", "1", "0", "0"]


def _cell(tmp_path: Path, model: str, reasoning: str, preds: list[str | None]) -> CellRecord:
    path = tmp_path / f"{model}.parquet"
    pq.write_table(pa.Table.from_pylist([
        {"id": f"i{i}", "label": g, "pred_label": p, "pred_ok": p is not None, "gen_text": p or "??",
         "pred_scores": None} for i, (g, p) in enumerate(zip(GOLDS, preds, strict=True))]), path)
    return CellRecord(model=model, dataset="ade_corpus_v2", task="classification", retriever="none",
                      testbed="none", rate=None, method="none", seed=0, metric="accuracy", metrics={},
                      predictions=path, n=4, reasoning=reasoning)


def test_twins_flip_rate_and_difference_by_hand(tmp_path: Path) -> None:
    off = _cell(tmp_path, "q", "", ["1", "0", "0", "0"])
    on = _cell(tmp_path, "q [budget=64]", "budget=64", ["1", "1", "1", None])
    other = _cell(tmp_path, "r [budget=64]", "budget=64", ["1", "1", "1", "1"])  # no twin: model r has none
    assert twin_pairs([off, on, other]) == [(off, on)]
    (grid,) = reasoning_twin_grids([off, on, other], n_boot=200)
    ((label, cells),) = grid.rows
    assert label == "q [budget=64] vs q / none / none / ade_corpus_v2"
    shown = [text for _, text in cells]
    # flips: i1 (0 → 1), i2 (0 → 1), i3 (0 → parse failure): 3 of 4. Accuracy: without 3/4 (i1 wrong),
    # with 2/4 (i2 wrong, i3 a failure): difference −25.0; McNemar's discordant pairs: i1 wrong → right,
    # i2 and i3 right → wrong: 1 and 2, exact two-sided binomial p = 2 · (1 + 3) / 8 = 1.0
    assert shown[0] == "4" and shown[1].startswith("75.0 [") and shown[2] == "accuracy"
    assert (shown[3], shown[4]) == ("75.0", "50.0") and shown[5].startswith("-25.0 [")
    assert shown[6] == "1.000"
    assert reasoning_twin_grids([off], n_boot=10) == []
