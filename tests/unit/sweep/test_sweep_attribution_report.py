"""The sweep report's attribution table, error-type table and dose–response plot, on hand-made cells."""

from __future__ import annotations

from pathlib import Path

from biorab.sweep.attribution_report import DosePoint, attribution_grids, dose_response, dose_response_data
from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import to_markdown


def _rate(value: float, low: float, high: float) -> dict[str, float | None]:
    return {"value": value, "ci_low": low, "ci_high": high}


def record(dataset: str, testbed: str, rate: float | None, metrics: dict, *, model: str = "m",
           task: str = "classification") -> CellRecord:
    retriever = "bm25" if testbed != "none" else "none"
    return CellRecord(model=model, dataset=dataset, task=task, retriever=retriever,
                      testbed=testbed, rate=rate, method="none", seed=0, metric="micro_f1",
                      metrics={"micro_f1": _rate(0.5, 0.4, 0.6), **metrics}, predictions=Path("x.parquet"),
                      n=10)


def _cells() -> list[CellRecord]:
    cells = [record("ade", "none", None, {"error_rate/wrong_tail": _rate(0.1, 0.0, 0.3)},
                    task="triple_extraction")]
    # A full copier of a 12-instance set: misled given misleading evidence stays 1 while the instances it
    # misleads grow from 3 to 12 of 12 (the share), and its twin is never misled (excess = the rate).
    for rate, share, p in ((0.2, (0.25, 0.0625, 0.5), 0.0123), (0.8, (0.75, 0.5, 1.0), 0.04),
                           (1.0, (1.0, 0.75, 1.0), 0.5)):
        cells.append(record("medmcqa", "counterfactual", rate, {
            "misled_rate": _rate(1.0, 1.0, 1.0), "misled_share": _rate(*share),
            "misled_rate_twin": _rate(0.0, 0.0, 0.0), "misled_excess": _rate(1.0, 1.0, 1.0),
            "hurt_rate": _rate(0.2, 0.1, 0.3), "misled_by_rank/1": _rate(1.0, 1.0, 1.0),
            "misled_by_prior/twin_wrong": _rate(1.0, 1.0, 1.0),
            "flip_mcnemar_p": {"value": p, "ci_low": None, "ci_high": None}}))
    cells.append(record("ade_corpus_v2", "counterfactual", 0.8, {"misled_rate": _rate(0.5, 0.2, 0.8)}))
    return cells


def test_attribution_and_error_type_tables() -> None:
    attribution, twin, position, errors = attribution_grids(_cells())
    text = to_markdown(attribution)
    # Holm over the table's three p-values (0.0123, 0.04, 0.5; the 4th cell has none), by hand:
    # 3 × 0.0123 = 0.0369, max(0.0369, 2 × 0.04) = 0.08, max(0.08, 1 × 0.5) = 0.5.
    assert "| m / bm25 / counterfactual (20%) / medmcqa | 100.0 [100.0, 100.0] | 25.0 [6.2, 50.0] | n/a | " \
           "n/a | n/a | n/a | n/a | 20.0 [10.0, 30.0] | 0.012 | 0.037 |" in text
    assert text.count("| 0.040 | 0.080 |") == 1 and text.count("| 0.500 | 0.500 |") == 1
    assert "**" not in text  # rates are not ranked
    twins = to_markdown(twin)
    assert "| m / bm25 / counterfactual (80%) / medmcqa | 0.0 [0.0, 0.0] | 100.0 [100.0, 100.0] | n/a |" \
        in twins
    assert "| m / bm25 / counterfactual (80%) / ade_corpus_v2 | " + " | ".join(["no baseline"] * 8) + " |" \
        in twins
    assert position.columns[-1] == "prior: twin wrong"
    assert "| m / bm25 / counterfactual (80%) / ade_corpus_v2 | n/a | n/a | n/a | no baseline |" \
        in to_markdown(position)
    assert errors.columns == ["wrong tail (ours)"]  # the project's type, not one of Table 7's
    assert errors.rows == [("m / none / none / ade", [(None, "10.0 [0.0, 30.0]")])]


def test_dose_response_plots_the_share_beside_the_conditional_rate_and_the_excess(tmp_path: Path) -> None:
    lines = dose_response_data(_cells())
    assert list(lines) == [("m", "medmcqa")]  # the one-rate ade_corpus_v2 line is left out
    assert lines[("m", "medmcqa")] == [
        DosePoint(20.0, (25.0, 6.25, 50.0), (100.0, 100.0, 100.0), (100.0, 100.0, 100.0)),
        DosePoint(80.0, (75.0, 50.0, 100.0), (100.0, 100.0, 100.0), (100.0, 100.0, 100.0)),
        DosePoint(100.0, (100.0, 75.0, 100.0), (100.0, 100.0, 100.0), (100.0, 100.0, 100.0))]
    path = dose_response(_cells(), tmp_path)
    assert path == tmp_path / "misled_vs_counterfactual_rate.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dose_response(_cells()[:2], tmp_path / "none") is None  # one rate: no line
