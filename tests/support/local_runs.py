"""The in-process runs of tests/integration/test_run_local.py, shared with the Ray and MLflow tests."""

from __future__ import annotations

from pathlib import Path

from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig

N_ADE, N_QA = 6, 5


def golds(data_dir: Path) -> dict[str, str]:
    out = {}
    for name, n in (("ade_corpus_v2", N_ADE), ("medmcqa", N_QA)):
        out.update({ex.id: ex.label for ex in load_dataset(name, "test", data_dir=data_dir)[:n]})
    return out


def answers(data_dir: Path) -> dict[str, str]:
    """Gold answers except one wrong answer per dataset: accuracy is 5/6 and 4/5."""
    ans = golds(data_dir)
    ans["ade_corpus_v2/test/2"] = "0" if ans["ade_corpus_v2/test/2"] == "1" else "1"
    ans["medmcqa/test/1"] = "(D)" if ans["medmcqa/test/1"] != "(D)" else "(A)"
    return ans


def make_config(tmp_path: Path, data_dir: Path, *, name: str = "local", retrieval: list | None = None,
                **backend: object) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": name,
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N_ADE}, {"name": "medmcqa", "limit": N_QA}],
        "retrieval": retrieval or [{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25", "k": 1}],
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers(data_dir), **backend}},
        "sampling": {"max_tokens": 8},
        "n_boot": 50,
        "resources": {"llm": {"batch_size": 4}},
        "tracking": {"enabled": False},
    })
