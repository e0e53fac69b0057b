"""The chain-depth analysis on the DrugMech fixtures through `biorab run` (fake backend): the deep
Delete/Invert positives of the open world, two runs; the report fits the first run only (the paper's
design), counts what it left out, and says why no regression could be fitted on these few answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment

RIGHT, WRONG = "Fully Blocked\n\nAnswer: Fully Blocked", "No Effect\n\nAnswer: No Effect"


@pytest.fixture(autouse=True)
def drugmech_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drugmechdb_dir: Path,
                 drugmechcf_dir: Path) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BIORAB_DRUGMECHDB_DIR", str(drugmechdb_dir))
    monkeypatch.setenv("BIORAB_DRUGMECHCF_DIR", str(drugmechcf_dir))


def test_chain_depth_report_on_the_fixtures(tmp_path: Path) -> None:
    answers = {f"change_pos_ppi_r250/{i}": WRONG for i in range(6)}  # Invert-Link wrong, Delete-Link right
    config = ExperimentConfig.model_validate({
        "name": "cd", "output_dir": str(tmp_path / "runs"),
        "drugmech": {"query_files": ["delete_pos_ppi_r250", "change_pos_ppi_r250"], "worlds": ["open"],
                     "runs": 2, "n_resamples": 200},
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers, "answer": RIGHT}},
        "sampling": {"max_tokens": 100, "seed": 7}, "tracking": {"enabled": False}})
    result = run_experiment(config)
    section = result.sections["drugmech"]["chain_depth"]
    assert (section["design"], section["n"], section["n_answers"]) == ("paper", 12, 24)  # run 0 of 2
    assert section["left_out"] == {"missing_moa": 0, "off_path": 0}
    by_length = [(g["moa_length"], g["n"], g["correct"]) for g in section["by_moa_length"]]
    assert by_length == [(5, 6, 3), (6, 6, 3)]
    # every fixture edit sits at the same distance from one end: no slope to fit, and the report says so
    assert "collinear" in section["logistic"]["error"]
    report = (result.run_dir / "report.md").read_text(encoding="utf-8")
    assert ("12 answers fitted: each model's first run (the paper's design), the model a covariate when "
            "there are several (24 answers in all; left out: 0 whose MoA is not in DrugMechDB, 0 whose "
            "edited link is on no drug-to-disease path of the MoA).") in report
    summary = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    assert len(summary["drugmech"]["chain_depth"]["samples"]) == 24  # kept for the sweep's pooled fit
