"""The report's paired test against the no-retrieval baseline: a resampled slice is paired only with the
same resample (not the plain test split), and a cell that shares no instance with its baseline is named
as not comparable instead of ending the report ("nothing to score: no instances", issue 45)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from biorab.sweep.collect import CellRecord
from biorab.sweep.significance import baseline_of, versus_baselines


def predictions(path: Path, ids: list[str], answers: list[str], golds: list[str]) -> Path:
    pq.write_table(pa.table({"id": ids, "label": golds, "pred_label": answers, "gen_text": answers,
                             "pred_ok": [True] * len(ids), "pred_scores": [None] * len(ids)}), path)
    return path


def record(retriever: str, predictions_path: Path, *, ratio: str | None = None, n: int = 4) -> CellRecord:
    return CellRecord(model="m", dataset="ade_corpus_v2", task="classification", retriever=retriever,
                      testbed="none" if retriever == "none" else "labeled", rate=None, method="none", seed=0,
                      metric="micro_f1", metrics={"micro_f1": {"value": 0.5}}, predictions=predictions_path,
                      n=n, ratio=ratio)


def test_resampled_cells_pair_with_their_own_slice(tmp_path: Path) -> None:
    p = predictions(tmp_path / "a.parquet", ["1"], ["y"], ["y"])
    plain, resampled = record("none", p), record("none", p, ratio="1:5")
    cell = record("medcpt", p, ratio="1:5")
    assert baseline_of(cell, [plain, cell]) is None  # was `plain`: the slices share no row at --limit 10
    assert baseline_of(cell, [plain, resampled, cell]) is resampled
    assert baseline_of(record("medcpt", p), [plain, resampled]) is plain


def test_a_cell_with_no_shared_instance_is_named_not_comparable(tmp_path: Path) -> None:
    golds = ["1", "0", "1", "0"]  # Ade-corpus-v2's label set
    base = record("none", predictions(tmp_path / "b.parquet", ["1", "2", "3", "4"], golds, golds))
    # same instances, two answers wrong: a test is made
    wrong = ["0", "0", "0", "0"]
    tested = record("bm25", predictions(tmp_path / "c.parquet", ["1", "2", "3", "4"], wrong, golds))
    # other instances only (ids 5-6): nothing to pair
    apart = record("medcpt", predictions(tmp_path / "d.parquet", ["5", "6"], golds[:2], golds[:2]), n=2)
    named: list[str] = []
    sig = versus_baselines([base, tested, apart], n_boot=20, seed=0, not_comparable=named)
    assert list(sig) == [1]
    assert sig[1].delta == -0.5  # accuracy 2/4 - 4/4 (by hand)
    assert named == ["m / medcpt / ade_corpus_v2 / labeled: no instance in common with its baseline "
                     "m / none / ade_corpus_v2 / none (2 and 4 instances)"]
    assert versus_baselines([base, apart], n_boot=20, seed=0) == {}  # no list given: left out, no error
