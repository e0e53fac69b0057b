"""`plan_sweep` on the paper grid with empty caches: pinned counts of cells, keys and estimated prompts."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import plan_sweep

# The paper grid is planned over the full staged data (its key counts are pinned on it).
pytestmark = pytest.mark.full_data

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow  # cold caches: builds the BM25 corpora once to digest them (seconds; a warm plan is faster)
def test_paper_grid_plan(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # no tokenizer of the paper's models here
    plan = plan_sweep(load_sweep(REPO / "jobs" / "paper.yaml"), path=REPO / "jobs" / "paper.yaml")
    assert plan.errors == []
    assert (plan.cells, plan.runs) == (325, 14)  # Tables 1-6, and Table 1's retrieval without test duplicates
    # zero-shot prompts are exact: 12,781 test instances per LLM, of which 59,315 distinct prompts over
    # the 5 LLMs (test sets repeat some texts); every retrieving prompt (and awareness probe) is estimated
    # because no hit is cached; every generation is new. Tables 4-6 add 2,656 estimated prompts: 1,600 of
    # the method cells (transformed corpora) and 1,056 distinct instances of the 1:1/1:5 resamples (their
    # own sampling: label scores), which Table 1's MedCPT/Contriever cells do not share. Table 1's 120
    # retrieval cells with exclude_test_duplicates add 191,715 estimated prompts (their hits are new keys).
    assert plan.unique_generation_keys == 482_621 and plan.new_generations == 482_621
    assert plan.estimated_prompts == 231_591 + 191_715
    assert plan.unique_generation_keys - plan.estimated_prompts == 59_315
    assert plan.unique_retrieval_keys == plan.new_retrieval_keys
    by_model = {m.model: m for m in plan.models}
    assert by_model["llama2-13b"].cells == 101 and by_model["qwen2.5-32b"].cells == 56
    assert not any(m.tokens_exact for m in plan.models) and all(m.digest_exact for m in plan.models)
    # the same work on a 32B model over 2 GPUs costs more GPU-hours than on an 8B model over 1
    assert by_model["qwen2.5-32b"].gpu_hours > 3 * by_model["llama3-8b"].gpu_hours > 0
