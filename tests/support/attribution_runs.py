"""The counterfactual fixture run of the attribution tests: classification (ADE corpus v2), QA (MedMCQA)
and triple (ADE) cells, each with its no-retrieval twin, on the fake backend."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig

DATASETS = ("ade_corpus_v2", "medmcqa", "ade")
N = 12
RATE = 0.8


def gold_answers(data_dir: Path) -> dict[str, str]:
    """Every fixture instance's gold label, by id: the ``map`` fake then answers the gold."""
    return {ex.id: ex.label for name in DATASETS for ex in load_dataset(name, "test", data_dir=data_dir)[:N]}


def attribution_config(tmp_path: Path, data_dir: Path, backend: dict[str, Any], *, name: str = "attr",
                       tracking: dict[str, Any] | None = None, k: int = 1,
                       sampling: dict[str, Any] | None = None) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": name,
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": d, "limit": N} for d in DATASETS],
        "retrieval": [{"testbed": "none"},
                      {"testbed": "counterfactual", "rate": RATE, "retriever": "bm25", "k": k}],
        "backend": {"name": "fake", "params": backend},
        "sampling": {"max_tokens": 64, **(sampling or {})},
        "n_boot": 50,
        "tracking": tracking or {"enabled": False},
    })


COPY_TOP = {"mode": "copy_top"}
