"""`biorab plan`'s decode tokens and API cost say what they are: a bound (the limit sent, or the model's
maximum output when none is sent), an estimate from a measured run, or an assumption."""

from __future__ import annotations

from types import SimpleNamespace as NS

import pytest

from biorab.cli.sweep import _print_plan
from biorab.sweep.cost_estimate import ModelPlan, SweepPlan, decode_per_answer
from biorab.sweep.throughput import Measured


def _config(params: dict[str, object], backend: str = "openai") -> NS:
    return NS(backend=NS(name=backend, params=params), sampling=NS(max_tokens=4096))


def test_decode_per_answer_basis() -> None:
    measured = Measured(seconds_per_generation=1.0, mean_completion_tokens=812.5, generations=40)
    omit = {"token_limit": "omit", "max_output_tokens": 100_000}
    assert decode_per_answer(_config(omit), measured) == (812.5, "measured_mean")
    assert decode_per_answer(_config(omit), None) == (100_000.0, "max_output")
    assert decode_per_answer(_config({"token_limit": "omit"}), None) == (4096.0, "assumed_max_tokens")
    assert decode_per_answer(_config({}), None) == (4096.0, "max_tokens")
    # only the openai backend omits a limit; others always send max_tokens
    assert decode_per_answer(_config(omit, backend="vllm"), None) == (4096.0, "max_tokens")


def _plan(*models: ModelPlan) -> SweepPlan:
    return SweepPlan(sweep="s", cells=2, runs=len(models), gpu="A100-80GB", models=list(models),
                     cost_usd=sum(m.cost_usd or 0 for m in models))


def test_the_printed_cost_says_bound_estimate_or_assumption(capsys: pytest.CaptureFixture[str]) -> None:
    bound = ModelPlan("a", "openai", ["a"], new_decode_tokens=200_000, cost_usd=2.0,
                      decode_basis="max_output")
    _print_plan(_plan(bound))
    out = " ".join(capsys.readouterr().out.split())
    assert "≤200,000" in out and "≤2.00" in out and "API cost ≤ $2.00 (the config's prices)" in out
    assert "≤ bound by the model's maximum output (max_output_tokens; no limit is sent)" in out

    estimate = ModelPlan("b", "openai", ["b"], new_decode_tokens=1_625, cost_usd=1.5,
                         decode_basis="measured_mean")
    _print_plan(_plan(bound, estimate))
    out = " ".join(capsys.readouterr().out.split())
    assert "~1,625" in out and "~1.50" in out
    assert "API cost ≈ $3.50 (the config's prices; per model: bound ≤, estimate ~, assumption ?)" in out
    assert "~ estimate, the mean a finished run of the model measured" in out

    assumed = ModelPlan("c", "openai", ["c"], new_decode_tokens=8_192, cost_usd=0.5,
                        decode_basis="assumed_max_tokens")
    _print_plan(_plan(assumed))
    out = " ".join(capsys.readouterr().out.split())
    assert "?8,192" in out and "API cost ≈ $0.50" in out and "max_tokens assumed, not a bound" in out
