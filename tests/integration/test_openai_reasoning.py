"""OpenAI reasoning models and thinking models through the openai backend, against a recording HTTP server
on 127.0.0.1: the exact request bodies of the DrugMech paper's settings (gpt-4o, o3-mini, o4-mini), the
token counts and the reasoning of each row, the config errors a reasoning model needs, and a refused key or
quota that stops the run with one message."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from biorab.common.errors import BackendFatalError, ConfigError
from biorab.common.records import Prompt
from biorab.generation import SamplingParams, build_backend
from tests.support.cli_runs import biorab, write_config
from tests.support.fault_openai_server import FaultServer, answer_for

#: The paper's settings (DRUGMECH_SPEC §9.1): seed 42, temperature 1.0, presence_penalty 0,
#: max_completion_tokens None, reasoning_effort medium (not sent to gpt-4o), flex tier for o3 and o4-mini.
PAPER = {"chat": True, "token_limit": "omit", "presence_penalty": 0.0, "reasoning_effort": "medium"}
SAMPLING = SamplingParams(temperature=1.0, seed=42, max_tokens=4096)
MESSAGES = [{"role": "user", "content": "prompt 0"}]


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as s:
        yield s


def _generate(server: FaultServer, model: str, sampling: SamplingParams = SAMPLING, **params: object):  # type: ignore[no-untyped-def]
    backend = build_backend("openai", {"base_url": server.base_url, "model": model, **PAPER, **params})
    try:
        return backend.generate([Prompt("q0", "prompt 0")], sampling)
    finally:
        backend.close()


def test_request_bodies_of_the_paper_models(server: FaultServer) -> None:
    _generate(server, "gpt-4o-2024-08-06")
    _generate(server, "o3-mini-2025-01-31")
    _generate(server, "o4-mini-2025-04-16", service_tier="flex")
    _generate(server, "o3-2025-04-16", service_tier="flex", token_limit="send")
    bodies = [r.body for r in server.log]
    assert bodies == [
        {"model": "gpt-4o-2024-08-06", "messages": MESSAGES, "temperature": 1.0, "top_p": 1.0, "seed": 42,
         "presence_penalty": 0.0},
        {"model": "o3-mini-2025-01-31", "messages": MESSAGES, "temperature": 1.0, "seed": 42,
         "presence_penalty": 0.0, "reasoning_effort": "medium"},
        {"model": "o4-mini-2025-04-16", "messages": MESSAGES, "temperature": 1.0, "seed": 42,
         "presence_penalty": 0.0, "reasoning_effort": "medium", "service_tier": "flex"},
        {"model": "o3-2025-04-16", "messages": MESSAGES, "max_completion_tokens": 4096, "temperature": 1.0,
         "seed": 42, "presence_penalty": 0.0, "reasoning_effort": "medium", "service_tier": "flex"},
    ]
    assert all(r.path == "/v1/chat/completions" for r in server.log)


def test_a_non_reasoning_model_keeps_max_tokens_and_stops(server: FaultServer) -> None:
    _generate(server, "gpt-4o", SamplingParams(max_tokens=8, stop=("\n",)), token_limit="send")
    body = server.log[0].body
    assert (body["max_tokens"], body["stop"], "reasoning_effort" in body) == (8, ["\n"], False)


def test_thinking_token_budget_goes_to_a_vllm_server(server: FaultServer) -> None:
    _generate(server, "Qwen3-4B-Thinking-2507", reasoning_effort=None, thinking_token_budget=2048)
    assert server.log[0].body == {"model": "Qwen3-4B-Thinking-2507", "messages": MESSAGES, "temperature": 1.0,
                                  "top_p": 1.0, "seed": 42, "presence_penalty": 0.0,
                                  "thinking_token_budget": 2048}


def test_reasoning_flag_overrides_the_name(server: FaultServer) -> None:
    _generate(server, "my-deployment", SAMPLING, reasoning=True, token_limit="send")
    assert server.log[0].body["max_completion_tokens"] == 4096 and "max_tokens" not in server.log[0].body


def test_rows_record_reasoning_tokens_and_reasoning_content(server: FaultServer) -> None:
    server.reasoning = "the drug binds the target so yes"
    server.reply = "YES.\nDrug: x | binds | Protein: y"
    [gen] = _generate(server, "o4-mini")
    assert (gen.text, gen.reasoning) == (server.reply, server.reasoning)
    counts = (gen.prompt_tokens, gen.completion_tokens, gen.reasoning_tokens, gen.finish_reason)
    assert counts == (2, 15, 7, "stop")


def test_think_text_is_split_from_the_answer(server: FaultServer) -> None:
    """A server without a reasoning parser sends the thinking model's text whole: ``think_split``."""
    server.reply = "<think>Let me see. The edge is removed.</think>\n\nSummary: Fully Blocked"
    [gen] = _generate(server, "qwen3-thinking", think_split=True)
    assert (gen.text, gen.reasoning) == ("Summary: Fully Blocked", "Let me see. The edge is removed.")
    [whole] = _generate(server, "qwen3-thinking")
    assert whole.text.startswith("<think>") and whole.reasoning is None


@pytest.mark.parametrize(("setting", "key"), [({"temperature": 0.0}, "sampling.temperature"),
                                               ({"temperature": 1.0, "top_p": 0.9}, "sampling.top_p")])
def test_refused_sampling_is_a_config_error_before_any_request(
    server: FaultServer, setting: dict[str, float], key: str
) -> None:
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        _generate(server, "o3-mini", SamplingParams(**setting))  # type: ignore[arg-type]
    assert server.log == []


def test_refused_sampling_exits_2_naming_the_key(tmp_path: Path) -> None:
    backend = {"name": "openai", "params": {"model": "o3-mini-2025-01-31", "chat": True,
                                            "base_url": "http://127.0.0.1:9/v1"}}
    cfg = write_config(tmp_path, tmp_path / "no-data", backend=backend, sampling={"temperature": 0.0})
    out = biorab("validate", str(cfg), "--skip-data", "--skip-tracking", cache=tmp_path / "cache")
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {cfg}, key 'sampling.temperature': o3-mini-2025-01-31 is a "), line


@pytest.mark.parametrize(("fault", "quota", "words"), [("401", False, "refused the API key"),
                                                      ("429", True, "reports no quota left")])
def test_auth_and_quota_errors_stop_the_call_once(
    server: FaultServer, fault: str, quota: bool, words: str
) -> None:
    server.faults = {f"prompt {i}": [fault] * 5 for i in range(6)}
    server.quota_exhausted = quota
    backend = build_backend("openai", {"base_url": server.base_url, "model": "gpt-4o", "max_retries": 3,
                                       "backoff_s": 0.01, "concurrency": 2})
    prompts = [Prompt(f"q{i}", f"prompt {i}") for i in range(6)]
    with pytest.raises(BackendFatalError, match=words) as err:
        backend.generate(prompts, SamplingParams())
    backend.close()
    assert "run the same command again to resume" in str(err.value)
    assert len(server.log) <= 2  # the in-flight requests only: no retries, no further rows


def test_a_plain_rate_limit_is_still_retried(server: FaultServer) -> None:
    server.faults = {"prompt 0": ["429"]}
    backend = build_backend("openai", {"base_url": server.base_url, "model": "gpt-4o", "backoff_s": 0.01})
    [gen] = backend.generate([Prompt("q0", "prompt 0")], SamplingParams())
    backend.close()
    assert gen.error is None and server.attempts("prompt 0") == 2


def test_run_reports_tokens_finish_reasons_and_cost_per_cell(server: FaultServer, tmp_path: Path,
                                                             data_dir: Path) -> None:
    """A run through the openai backend with a price: summary.json has each cell's usage and cost."""
    import json

    backend = {"name": "openai", "params": {"base_url": server.base_url, "model": "gpt-4o",
                                            "price": {"input_per_mtok": 2.5, "output_per_mtok": 10.0}}}
    cfg = write_config(tmp_path, data_dir, backend=backend, sampling={"max_tokens": 2})
    out = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert out.returncode == 0, out.stderr
    summary = json.loads(next((tmp_path / "runs").glob("*/summary.json")).read_text())
    [cell] = summary["cells"]
    usage = cell["usage"]
    answers = [answer_for(r.prompt, r.body.get("stop") or [], 2) for r in server.log]
    prompt_tokens = sum(len(r.prompt.split()) for r in server.log)
    completion_tokens = sum(len(text.split()) for text, _ in answers)
    assert len(server.log) == 6 and (usage["prompt_tokens"], usage["completion_tokens"]) == (
        prompt_tokens, completion_tokens)
    reasons = {reason: sum(1 for _, r in answers if r == reason) for _, reason in answers}
    assert usage["finish_reasons"] == reasons and usage["reasoning_tokens"] == 0
    cost = (prompt_tokens * 2.5 + completion_tokens * 10.0) / 1e6
    assert usage["cost_usd"] == pytest.approx(cost, abs=1e-6)
    assert summary["usage"]["cost_usd"] == usage["cost_usd"]


def test_a_refused_key_stops_the_run_resumably(server: FaultServer, tmp_path: Path, data_dir: Path) -> None:
    """One clear message and exit 2, no error rows; the same command resumes once the key works (in-process;
    on Ray: tests/ray/test_pipeline_ray_fatal.py)."""
    server.always = "401"
    backend = {"name": "openai", "params": {"base_url": server.base_url, "model": "gpt-4o", "max_retries": 2}}
    cfg = write_config(tmp_path, data_dir, backend=backend, sampling={"max_tokens": 2})
    out = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert out.returncode == 2, out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert "refused the API key for model gpt-4o (HTTP 401" in line and "to resume" in line, line
    assert len(server.log) <= 2  # a batch of 2 in flight, no retries, no more batches
    server.always = None
    again = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
    assert again.returncode == 0, again.stderr
    assert len(server.log) == 2 + 6


def test_requests_per_minute_limit(server: FaultServer) -> None:
    backend = build_backend("openai", {"base_url": server.base_url, "model": "gpt-4o",
                                       "requests_per_minute": 60, "concurrency": 8})
    prompts = [Prompt(f"q{i}", f"prompt {i}") for i in range(62)]
    gens = backend.generate(prompts, SamplingParams())
    backend.close()
    assert all(g.error is None for g in gens)
    starts = sorted(r.at for r in server.log)
    assert 1.5 <= starts[-1] - starts[0] < 8.0  # a minute's 60 at once, then about one a second
