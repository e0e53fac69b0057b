"""`biorab plan jobs/drugmech_models.yaml`: the DrugMech paper's five models, each with its cells, tokens
and (for the OpenAI models, from the job's prices) the cost, bounded by each model's maximum output; the
job's per-model settings reach each run's config (Qwen: one run; reasoning_effort sent only to reasoning
models; flex for o3 and o4-mini; the factual test on gpt-4o only; the paper's retries)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.records import Prompt
from biorab.generation.base import SamplingParams
from biorab.generation.openai.params import OpenAIParams, request_body
from biorab.sweep import load_sweep
from biorab.sweep.expand import expand_runs
from tests.support.cli_runs import REPO, biorab

JOB = REPO / "jobs" / "drugmech_models.yaml"
MODELS = ["gpt-4o-2024-08-06", "o3-2025-04-16", "o3-mini-2025-01-31", "o4-mini-2025-04-16",
          "Qwen3-4B-Thinking-2507"]


def test_plan_lists_the_five_models_with_cells_tokens_and_cost(tmp_path: Path) -> None:
    out = biorab("plan", str(JOB), "--json", "--skip-data", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    plan = json.loads(out.stdout)
    assert [m["model"] for m in plan["models"]] == MODELS
    cells = {m["model"]: m["cells"] for m in plan["models"]}
    # 12 counterfactual files × 2 worlds = 24 cells per run; gpt-4o adds 4 factual cells (3 + 1 modes)
    assert cells == {"gpt-4o-2024-08-06": 28 * 5, **dict.fromkeys(MODELS[1:4], 24 * 5),
                     "Qwen3-4B-Thinking-2507": 24}
    o4 = plan["models"][3]
    # no limit is sent (token_limit: omit) and nothing is measured yet: max_tokens (4096) bounds nothing,
    # the model's maximum output (100,000 for o4-mini) does
    assert o4["decode_basis"] == "max_output"
    assert o4["new_prompt_tokens"] > 0 and o4["new_decode_tokens"] == o4["new_generations"] * 100_000
    assert o4["cost_usd"] == pytest.approx((o4["new_prompt_tokens"] * 0.55 + o4["new_decode_tokens"] * 2.20)
                                           / 1e6, abs=0.01)
    assert plan["models"][0]["new_decode_tokens"] == plan["models"][0]["new_generations"] * 16_384  # gpt-4o
    assert plan["models"][4]["cost_usd"] is None
    assert plan["cost_usd"] == pytest.approx(sum(m["cost_usd"] or 0 for m in plan["models"]), abs=0.05)


def test_each_model_gets_the_paper_request() -> None:
    runs = {r.model: r.config for r in expand_runs(load_sweep(JOB), path=JOB)}
    assert runs["Qwen3-4B-Thinking-2507"].drugmech.runs == 1 and runs["o3-2025-04-16"].drugmech.runs == 5
    sampling = runs["o3-2025-04-16"].sampling
    assert (sampling.temperature, sampling.seed) == (1.0, 42)
    bodies = {}
    for model, config in runs.items():
        body = request_body(OpenAIParams(**config.backend.params), Prompt("q", "p"), SamplingParams(
            temperature=1.0, seed=42))
        bodies[model] = {k: v for k, v in body.items() if k not in ("model", "messages")}
    reasoning = {"temperature": 1.0, "seed": 42, "presence_penalty": 0.0, "reasoning_effort": "medium"}
    assert bodies == {
        "gpt-4o-2024-08-06": {"temperature": 1.0, "top_p": 1.0, "seed": 42, "presence_penalty": 0.0},
        "o3-2025-04-16": {**reasoning, "service_tier": "flex"},
        "o3-mini-2025-01-31": reasoning,
        "o4-mini-2025-04-16": {**reasoning, "service_tier": "flex"},
        "Qwen3-4B-Thinking-2507": {"temperature": 1.0, "top_p": 1.0, "seed": 42, "presence_penalty": 0.0},
    }


def test_the_factual_test_is_gpt4o_only_in_the_cell_listing(tmp_path: Path) -> None:
    out = biorab("plan", str(JOB), "--cells", "--skip-data", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    blocks = out.stdout.split("cells of run ")[1:]
    assert [b.split(" ", 1)[0] for b in blocks] == MODELS
    for model, block in zip(MODELS, blocks, strict=True):
        cells = [line.split()[0] for line in block.splitlines()[1:] if line.startswith("  dm-")]
        factual = sorted({c.split("__")[0] + "__" + c.split("__")[1] for c in cells if "factuals" in c})
        if model == "gpt-4o-2024-08-06":
            positives = ["ANONYMIZED_DISEASE", "NAMED_DISEASE", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"]
            assert factual == ["dm-factuals_neg_r1k__NAMED_DISEASE",
                               *(f"dm-factuals_pos_r1k__{mode}" for mode in positives)]
        else:
            assert factual == [], model
        assert len({c.split("__")[0] for c in cells}) == (14 if model == MODELS[0] else 12)


def test_retries_as_the_paper() -> None:
    # DRUGMECH_SPEC §9.1: up to 6 retries, exponential backoff 5-90 s plus 0-10 s jitter
    for run in expand_runs(load_sweep(JOB), path=JOB):
        p = OpenAIParams(**run.config.backend.params)
        assert (p.max_retries, p.backoff_s, p.backoff_max_s, p.backoff_jitter_s) == (6, 5, 90, 10), run.model

