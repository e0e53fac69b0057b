"""`plan_sweep` cold (empty cache folder) and warm (corpus digests on disk) gives the same plan, equal to
the numbers main's planner gave for the same grids (pinned below, computed before the plan was made
faster); after the sweep has run, the plan finds every hit and generation in the caches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import SweepPlan, plan_sweep
from biorab.sweep.run import run_sweep

FIELDS = (
    "cells",
    "runs",
    "unique_retrieval_keys",
    "new_retrieval_keys",
    "unique_generation_keys",
    "new_generations",
    "estimated_prompts",
    "prompt_tokens",
    "new_prompt_tokens",
    "new_decode_tokens",
)


def counts(plan: SweepPlan) -> dict[str, int]:
    assert plan.errors == []
    return {f: getattr(plan, f) for f in FIELDS}


def write(
    tmp_path: Path,
    data_dir: Path,
    models: dict[str, Any],
    matrix: list[dict[str, Any]],
    retrievers: dict[str, Any] | None = None,
) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "grid",
                "output_dir": str(tmp_path / "runs"),
                "data_dir": str(data_dir),
                "models": models,
                "retrievers": retrievers or {},
                "matrix": matrix,
                "sampling": {"max_tokens": 8},
                "n_boot": 20,
                "resources": {"llm": {"batch_size": 4}},
                "tracking": {"enabled": False},
            }
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture(autouse=True)
def _empty_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def test_testbed_grid_cold_warm_and_after_a_run(tmp_path: Path, data_dir: Path) -> None:
    # every testbed (negative_awareness shares counterfactual 100%'s corpus and so its hits), two models,
    # BM25 with the default selection and with Table 1's classification variant (k 3, no ties, no dedupe)
    path = write(
        tmp_path,
        data_dir,
        {
            "a": {"backend": "fake", "params": {"mode": "choice"}},
            "b": {"backend": "fake", "params": {"mode": "choice", "seed": 1}},
        },
        [
            {
                "models": ["a", "b"],
                "datasets": [
                    {"name": "ade_corpus_v2", "limit": 4},
                    {"name": "pharmkg", "limit": 3},
                    {"name": "ade", "limit": 3},
                ],
                "retrievers": ["none", "bm25"],
                "testbeds": ["labeled", "unlabeled", "counterfactual", "diverse"],
                "rates": [0.2, 1.0],
            },
            {
                "models": ["a"],
                "datasets": [{"name": "semclass", "limit": 3}],
                "retrievers": ["bm25-cls"],
                "testbeds": ["labeled", "negative_awareness"],
            },
            {
                "models": ["b"],
                "datasets": [{"name": "ade", "limit": 3}],
                "retrievers": ["bm25"],
                "testbeds": ["negative_awareness"],
            },
        ],
        {"bm25-cls": {"retriever": "bm25", "k": 3, "keep_ties": False, "dedupe": False, "template": "bm25"}},
    )
    sweep = load_sweep(path)
    cold = counts(plan_sweep(sweep, path=path))
    assert (tmp_path / "cache" / "sweep" / "corpus_digests.json").is_file()
    assert counts(plan_sweep(sweep, path=path)) == cold
    assert cold == {
        "cells": 39,
        "runs": 4,
        "unique_retrieval_keys": 56,
        "new_retrieval_keys": 56,
        "unique_generation_keys": 135,
        "new_generations": 135,
        "estimated_prompts": 115,
        "prompt_tokens": 25123,
        "new_prompt_tokens": 25123,
        "new_decode_tokens": 1080,
    }

    result = run_sweep(sweep, path=path)
    assert (result.cells, result.generated) == (39, 111)
    after = plan_sweep(sweep, path=path)
    assert counts(after) == {
        "cells": 39,
        "runs": 4,
        "unique_retrieval_keys": 56,
        "new_retrieval_keys": 0,
        "unique_generation_keys": 117,
        "new_generations": 0,
        "estimated_prompts": 0,
        "prompt_tokens": 26882,
        "new_prompt_tokens": 0,
        "new_decode_tokens": 0,
    }
    assert [(m.model, m.cells, m.new_generations) for m in after.models] == [("a", 20, 0), ("b", 19, 0)]


def test_method_and_resampled_cells_cold_equals_warm(tmp_path: Path, data_dir: Path) -> None:
    # corpus-method cells (Detect-and-Correct, LLM labeling) and the sampling-bias resampling; their
    # retrieval keys are left unpinned (how method cells key their hits is the methods' business)
    path = write(
        tmp_path,
        data_dir,
        {"a": {"backend": "fake", "params": {"mode": "choice"}}},
        [
            {
                "models": ["a"],
                "datasets": [{"name": "ade_corpus_v2", "limit": 4}, {"name": "pharmkg", "limit": 3}],
                "retrievers": ["none", "bm25"],
                "testbeds": ["counterfactual", "unlabeled"],
                "rates": [1.0],
            },
            {
                "models": ["a"],
                "datasets": [{"name": "ade_corpus_v2", "limit": 4}, {"name": "pharmkg", "limit": 3}],
                "retrievers": ["bm25"],
                "testbeds": ["counterfactual"],
                "rates": [1.0],
                "methods": ["detect_correct"],
            },
            {
                "models": ["a"],
                "datasets": [{"name": "ade_corpus_v2", "limit": 4}],
                "retrievers": ["bm25"],
                "testbeds": ["unlabeled"],
                "methods": ["llm_label"],
            },
            {
                "models": ["a"],
                "datasets": [
                    {"name": "ade_corpus_v2", "resample": {"ratio": "1:1", "seed": 0}},
                    {"name": "ade_corpus_v2", "resample": {"ratio": "1:5", "seed": 0}, "limit": 12},
                ],
                "retrievers": ["none", "bm25"],
                "testbeds": ["labeled"],
            },
        ],
    )
    sweep = load_sweep(path)
    cold = counts(plan_sweep(sweep, path=path))
    assert counts(plan_sweep(sweep, path=path)) == cold
    del cold["unique_retrieval_keys"], cold["new_retrieval_keys"]
    assert cold == {
        "cells": 13,
        "runs": 3,
        "unique_generation_keys": 95,
        "new_generations": 95,
        "estimated_prompts": 58,
        "prompt_tokens": 14851,
        "new_prompt_tokens": 14851,
        "new_decode_tokens": 760,
    }
