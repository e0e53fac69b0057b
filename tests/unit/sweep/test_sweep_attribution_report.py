"""The sweep report's attribution table, error-type table and dose–response plot, on hand-made cells."""

from __future__ import annotations

from pathlib import Path

from biorab.sweep.attribution_report import attribution_grids, dose_response
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
    for rate, misled in ((0.2, 0.1), (0.8, 0.6), (1.0, 0.9)):
        cells.append(record("medmcqa", "counterfactual", rate, {
            "misled_rate": _rate(misled, misled - 0.05, misled + 0.05), "hurt_rate": _rate(0.2, 0.1, 0.3),
            "flip_mcnemar_p": {"value": 0.0123, "ci_low": None, "ci_high": None}}))
    return cells


def test_attribution_and_error_type_tables() -> None:
    attribution, errors = attribution_grids(_cells())
    text = to_markdown(attribution)
    assert "| m / bm25 / counterfactual (80%) / medmcqa | 60.0 [55.0, 65.0] | n/a | n/a | n/a | n/a | " \
           "20.0 [10.0, 30.0] | 0.012 |" in text
    assert "**" not in text  # rates are not ranked
    assert errors.columns == ["wrong tail"]
    assert errors.rows == [("m / none / none / ade", [(None, "10.0 [0.0, 30.0]")])]


def test_dose_response_plot(tmp_path: Path) -> None:
    path = dose_response(_cells(), tmp_path)
    assert path == tmp_path / "misled_vs_counterfactual_rate.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert dose_response(_cells()[:2], tmp_path / "none") is None  # one rate: no line
