"""The DrugMech runs of tests/integration/test_run_drugmech.py, shared with the Ray test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biorab.drugmech.prompts.texts import EL_OPTIONS
from biorab.experiment import ExperimentConfig

REPO = Path(__file__).resolve().parents[2]


WHY = "A long explanation of the mechanism that is more than long enough to pass the length checks. " * 2


NO = "NO supporting beneficial Mechanism of Action found."


ANSWERS = {
    # change_pos (Invert, positive): strict {Contra-indicated, Fully Blocked}, relaxed + Partially Blocked.
    "change_pos_dpi_r250/0": WHY + "\n\n## Summary\n" + EL_OPTIONS["Contra-indicated"],  # strict + relaxed
    "change_pos_dpi_r250/1": WHY + "\n\n## Summary\n" + EL_OPTIONS["Partially Blocked"],  # relaxed only
    "change_pos_dpi_r250/2": "Not sure.",  # unparsed: wrong
    "change_pos_dpi_r250/3": "word " * 150,  # cut at max_tokens (finish_reason length): incomplete, wrong
    # AddLink_neg: the default answer NO is right; YES to a negative is wrong.
    "AddLink_neg_dpi_r1k/2": "YES.\nDrug: A | increases activity of | Protein: B",
}


def make_config(
    tmp_path: Path, *, limit: int = 4, tracking: bool = False, **backend: Any
) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": "dm",
        "output_dir": str(tmp_path / "runs"),
        "drugmech": {"query_files": ["change_pos_dpi_r250", "AddLink_neg_dpi_r1k"],
                     "worlds": ["open", "closed"], "runs": 2, "limit": limit, "n_resamples": 200},
        "backend": {"name": "fake", "params": {"mode": "map", "answers": ANSWERS, "answer": NO, **backend}},
        "sampling": {"max_tokens": 100, "seed": 7},
        "resources": {"llm": {"batch_size": 8}},
        "tracking": {"enabled": tracking},
    })
