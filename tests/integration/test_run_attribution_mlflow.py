"""MLflow's evaluation view of a counterfactual run: each trace carries the gold as an expectation and the
verdict, the misled flag and the flip as feedback, read back from a local store and equal to the cell's
``attribution.parquet``; the searches MLflow's Traces page runs filter by them."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.attribution.cell_attribution import read_attribution
from biorab.runner import run_experiment
from tests.support.attribution_runs import COPY_TOP, attribution_config

TRACES = 4


@pytest.mark.slow
def test_traces_carry_gold_verdict_misled_and_flip(tmp_path: Path, data_dir: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = attribution_config(tmp_path, data_dir, COPY_TOP, tracking={"enabled": True, "traces": TRACES})
    result = run_experiment(cfg)
    run_experiment(cfg)  # a rerun adds no second trace, and so no second assessment

    from mlflow.tracing.client import TracingClient
    from mlflow.tracking import MlflowClient

    store = result.tracking_uri
    experiment = MlflowClient(tracking_uri=store).get_experiment_by_name("attr")
    tracing = TracingClient(store)
    retrieving = [c for c in result.cells if c.plan.retrieves]
    assert retrieving
    for cell in retrieving:
        attribution = read_attribution(result.run_dir / "cells" / cell.plan.cell_id)
        (child,) = MlflowClient(tracking_uri=store).search_runs(
            [experiment.experiment_id], filter_string=f"tags.cell_id = '{cell.plan.cell_id}'")
        assert child.data.metrics["misled_rate"] == pytest.approx(cell.metrics["misled_rate"]["value"])
        assert "ci_low/misled_rate" in child.data.metrics and "ci_high/hurt_rate" in child.data.metrics
        assert child.data.tags["ci.misled_rate"].startswith(f"{cell.metrics['misled_rate']['value']:.3f} [")
        # the claim diagnostics (biorab.diagnostics) of the cells of tasks with shared items, not MedMCQA's
        claims = {k: v["value"] for k, v in cell.metrics.items() if k.startswith("claims/")}
        assert bool(claims) == (cell.plan.task != "qa")
        for name, value in claims.items():
            assert child.data.metrics[name] == pytest.approx(value)
            assert f"ci_low/{name}" in child.data.metrics
        assert child.data.tags["attribution.baseline"] == cell.extra["attribution"]["twin_cell_id"]
        traces = list(tracing.search_traces(locations=[experiment.experiment_id], run_id=child.info.run_id))
        assert len(traces) == TRACES
        for trace in traces:
            full = tracing.get_trace(trace.info.trace_id)
            instance = full.info.tags["biorab.instance"]
            found = {(a.name, type(a).__name__): a for a in full.info.assessments}
            assert len(found) == len(full.info.assessments)  # each once, rerun included
            row = attribution[instance]
            expected = found[("expected_answer", "Expectation")].expectation.value
            assert expected == next(i.label for i in _examples(cell, data_dir) if i.id == instance)
            assert found[("correct", "Feedback")].feedback.value == row["correct"]
            # `misled` only where the evidence could mislead; a parse failure's verdict is `false`.
            if row["misleading_evidence"]:
                assert found[("misled", "Feedback")].feedback.value == row["followed_corruption"]
            else:
                assert ("misled", "Feedback") not in found
            assert not (row["parse_failed"] and row["correct"] is not False)
            assert found[("flip", "Feedback")].feedback.value == row["flip"]
            assert found[("correct", "Feedback")].source.source_type == "CODE"
        # The new rates reach MLflow with their bounds (docs/metrics.md lists them).
        for name in ("misled_excess", "misled_rate_twin", "switched_to_evidence", "misled_share"):
            assert child.data.metrics[name] == pytest.approx(cell.metrics[name]["value"])
    # The no-retrieval cells: the copier sees no example and answers nothing parsable, so each traced
    # instance is a parse failure, logged as correct = false, with no misled feedback (nothing could mislead).
    for cell in (c for c in result.cells if not c.plan.retrieves):
        attribution = read_attribution(result.run_dir / "cells" / cell.plan.cell_id)
        run_id = _run_id(store, cell)
        traces = list(tracing.search_traces(locations=[experiment.experiment_id], run_id=run_id))
        assert len(traces) == TRACES
        for trace in traces:
            full = tracing.get_trace(trace.info.trace_id)
            row = attribution[full.info.tags["biorab.instance"]]
            found = {a.name: a for a in full.info.assessments}
            assert row["parse_failed"] and found["correct"].feedback.value is False
            assert "misled" not in found
    # The Traces page's filter: misled traces of the run's experiment.
    misled = tracing.search_traces(locations=[experiment.experiment_id],
                                   filter_string="feedback.misled = 'true'")
    every = [
        (t.info.tags["biorab.instance"], c.plan.cell_id) for c in retrieving
        for t in tracing.search_traces(locations=[experiment.experiment_id], run_id=_run_id(store, c))
    ]
    want = {i for i, cell_id in every if read_attribution(result.run_dir / "cells" / cell_id)[i][
        "followed_corruption"]}
    assert want and {t.info.tags["biorab.instance"] for t in misled} == want


def _run_id(store: str, cell: object) -> str:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=store)
    experiment = client.get_experiment_by_name("attr")
    (child,) = client.search_runs([experiment.experiment_id],
                                  filter_string=f"tags.cell_id = '{cell.plan.cell_id}'")  # type: ignore[attr-defined]
    return str(child.info.run_id)


def _examples(cell: object, data_dir: Path) -> list:  # type: ignore[type-arg]
    from biorab.datasets import load_dataset

    return list(load_dataset(cell.plan.dataset, "test", data_dir=data_dir))  # type: ignore[attr-defined]
