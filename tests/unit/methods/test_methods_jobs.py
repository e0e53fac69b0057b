"""The methods' job specs validate as `biorab validate` checks them (data included) and plan the cells the
docs describe."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.runner.checks.validate import load_experiment

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

JOBS = Path(__file__).resolve().parents[3] / "jobs"


@pytest.mark.parametrize(("job", "cells", "methods"), [
    ("detect_correct.yaml", 24, {"none": 15, "detect_correct": 6, "llm_label": 3}),  # 3 datasets x 8
    ("detect_correct_cpu.yaml", 4, {"none": 2, "detect_correct": 1, "llm_label": 1}),
    ("sampling_bias.yaml", 8, {"none": 8}),
    ("sampling_bias_cpu.yaml", 2, {"none": 2}),
])
def test_methods_jobs_validate(job: str, cells: int, methods: dict[str, int], data_dir: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_DATA_DIR", str(data_dir))
    config = load_experiment(JOBS / job)
    planned = config.cells()
    assert len(planned) == cells
    counts: dict[str, int] = {}
    for cell in planned:
        counts[cell.retrieval.method] = counts.get(cell.retrieval.method, 0) + 1
    assert counts == methods
    if job.startswith("sampling_bias"):
        assert config.sampling.score_labels
        assert {c.dataset.resample.ratio for c in planned if c.dataset.resample} == {"1:1", "1:5"}
