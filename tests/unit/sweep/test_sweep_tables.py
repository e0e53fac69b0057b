"""The report's table shapes for the paper's Tables 4-6: the methods' own scores, and the sampling-bias
cells (resampled test splits) in a table of their own and in no other."""

from __future__ import annotations

from pathlib import Path

from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import build_tables, to_markdown


def record(retriever: str, testbed: str, *, method: str = "none", ratio: str | None = None,
           metrics: dict | None = None, rate: float | None = None) -> CellRecord:
    return CellRecord(model="m", dataset="ade_corpus_v2", task="classification", retriever=retriever,
                      testbed=testbed, rate=rate, method=method, seed=0, metric="micro_f1",
                      metrics={"micro_f1": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6}, **(metrics or {})},
                      predictions=Path("x.parquet"), n=10, ratio=ratio)


def test_method_scores_and_sampling_bias_tables() -> None:
    dc = {"detection_precision": {"value": 0.2, "ci_low": 0.19, "ci_high": 0.21},
          "detection_recall": {"value": 1.0, "ci_low": 1.0, "ci_high": 1.0},
          "correction_accuracy": {"value": 0.2875, "ci_low": 0.265, "ci_high": 0.311}}
    bias = {"weighted_f1": {"value": 0.35, "ci_low": 0.3, "ci_high": 0.4},
            "binary_auroc": {"value": 0.5175, "ci_low": 0.45, "ci_high": 0.58}}
    cells = [record("none", "none"), record("medcpt", "labeled"),
             record("bm25", "counterfactual", rate=0.2),
             record("bm25", "counterfactual", rate=0.2, method="detect_correct", metrics=dc),
             record("medcpt", "labeled", ratio="1:5", metrics={**bias, "micro_f1": {"value": 0.9}})]
    grids = {g.title.split(":")[0]: g for g in build_tables(cells, {})}
    assert list(grids) == ["Table 1 shape", "Table 2 shape", "Tables 4-5 shape", "Tables 4-5",
                           "Table 6 shape"]
    scores = grids["Tables 4-5"]
    assert scores.columns == ["detection precision", "detection recall", "correction accuracy"]
    assert scores.rows == [("m / detect_correct / counterfactual (20%) / ade_corpus_v2",
                            [(0.2, "20.00 [19.0, 21.0]"), (1.0, "100.00 [100.0, 100.0]"),
                             (0.2875, "28.75 [26.5, 31.1]")])]
    bias_grid = grids["Table 6 shape"]
    assert bias_grid.columns == ["accuracy (micro f1)", "weighted f1", "binary auroc"]  # micro P = R = F1
    assert bias_grid.rows == [("m / medcpt / ade_corpus_v2 / 1:5", [
        (0.9, "90.00"), (0.35, "35.00 [30.0, 40.0]"), (0.5175, "51.75 [45.0, 58.0]")])]
    # the resampled cell is not Table 1's MedCPT entry (that one is over the whole test split)
    assert grids["Table 1 shape"].rows[1] == ("m / medcpt", [(0.5, "50.00 [40.0, 60.0]")])
    assert "| m / medcpt / ade_corpus_v2 / 1:5 |" in to_markdown(bias_grid)


def test_test_duplicates_side_by_side_and_leak_shares() -> None:
    from dataclasses import replace

    base = record("bm25", "labeled")
    paper = replace(base, setting="S", leak=0.194)
    clean = replace(base, retriever="bm25-notestdups", excluded=True, setting="S", leak=0.0,
                    metrics={"micro_f1": {"value": 0.45, "ci_low": 0.35, "ci_high": 0.55}})
    lone = replace(record("medcpt", "labeled"), retriever="medcpt-notestdups", excluded=True, setting="T",
                   leak=0.0)
    grids = {g.title.split(":")[0].split(" (")[0]: g for g in build_tables([record("none", "none"), paper,
                                                                           clean, lone], {})}
    # the excluded cells stay out of Table 1 (the paper's setup), which names its headline metric
    assert [name for name, _ in grids["Table 1 shape"].rows] == ["m / none", "m / bm25"]
    assert "ade_corpus_v2: accuracy" in grids["Table 1 shape"].note
    side = grids["Table 1 with the test sentences' own copies excluded from retrieval"]
    assert side.columns == ["as the paper", "leak share ×100", "test duplicates excluded", "leak share ×100"]
    assert side.rows == [("m / bm25 / ade_corpus_v2", [(0.5, "50.00 [40.0, 60.0]"), (None, "19.4"),
                                                       (0.45, "45.00 [35.0, 55.0]"), (None, "0.0")])]
    leaks = grids["Leak share ×100"]
    assert leaks.rows == [("m / bm25 / labeled", [(None, "19.4")]),
                          ("m / bm25-notestdups / labeled", [(None, "0.0")]),
                          ("m / medcpt-notestdups / labeled", [(None, "0.0")])]
    assert "own text" in to_markdown(leaks)


def test_cells_that_would_share_a_row_get_rows_of_their_own() -> None:
    """Rows are keyed by the whole cell spec: cells that differ only in an axis the label leaves out get
    that axis in their labels (only that one); cells with the same spec are an error, not one hidden cell."""
    from dataclasses import replace

    import pytest

    from biorab.sweep.tables import rows_of

    def spec(limit: str, filter_: str = "null") -> tuple[tuple[str, str], ...]:
        return (("dataset.limit", limit), ("retrieval.filter", filter_), ("sampling.max_tokens", "8"))

    plain = replace(record("bm25", "counterfactual", rate=0.2), spec=spec("60"))
    small = replace(plain, spec=spec("4"), predictions=Path("small.parquet"))
    seeded = replace(plain, seed=1, predictions=Path("seeded.parquet"))
    encoder = '{"encoder": "e", "threshold": 0.5}'
    kept = replace(plain, spec=spec("60", encoder), predictions=Path("kept.parquet"))
    other_ds = replace(plain, dataset="semclass", spec=spec("null"))

    def label(c: CellRecord) -> str:
        return f"{c.model} / {c.corpus}"

    def labels(cells: list[CellRecord]) -> dict[str, list[str]]:
        return {name: list(row) for name, row in rows_of(cells, label, lambda c: c.dataset).items()}

    assert labels([plain, other_ds]) == {"m / counterfactual (20%)": ["ade_corpus_v2", "semclass"]}
    assert labels([plain, small, other_ds]) == {"m / counterfactual (20%) / 60 rows": ["ade_corpus_v2"],
                                               "m / counterfactual (20%) / 4 rows": ["ade_corpus_v2"],
                                               "m / counterfactual (20%) / all rows": ["semclass"]}
    assert list(labels([plain, seeded])) == ["m / counterfactual (20%) / seed 0",
                                             "m / counterfactual (20%) / seed 1"]
    assert list(labels([plain, kept])) == ["m / counterfactual (20%)",
                                           f"m / counterfactual (20%) / filter {encoder}"]
    other_tokens = replace(plain, spec=(*spec("60")[:2], ("sampling.max_tokens", "32")))
    assert list(labels([plain, other_tokens])) == ["m / counterfactual (20%) / max_tokens 8",
                                                   "m / counterfactual (20%) / max_tokens 32"]
    with pytest.raises(ValueError, match=r"x.parquet, x.parquet would share the report's row "
                                         r"'m / counterfactual \(20%\)', column 'ade_corpus_v2'"):
        rows_of([plain, plain], label, lambda c: c.dataset)
