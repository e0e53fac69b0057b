"""The openai backend against a local fault-injecting OpenAI-compatible server (real HTTP on 127.0.0.1)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from biorab.common.errors import BackendError, ConfigError
from biorab.common.records import OutputConstraint, Prompt
from biorab.generation import SamplingParams, build_backend
from tests.support.fault_openai_server import FaultServer

FAST = {"backoff_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 0.5, "model": "fault-model"}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer(hang_s=1.5) as s:
        yield s


def _backend(server: FaultServer, **params: object):  # type: ignore[no-untyped-def]
    return build_backend("openai", {"base_url": server.base_url, **FAST, **params})


def _prompts(n: int) -> list[Prompt]:
    return [Prompt(f"ade/test/{i}", f"prompt {i}", stop=("\n",)) for i in range(n)]


def test_plain_completions_in_order(server: FaultServer) -> None:
    backend = _backend(server, concurrency=4)
    gens = backend.generate(_prompts(12), SamplingParams(max_tokens=8))
    assert [g.text for g in gens] == [f"re: prompt {i}" for i in range(12)]
    assert all(g.error is None and g.finish_reason == "stop" for g in gens)
    assert [(g.prompt_tokens, g.completion_tokens) for g in gens[:1]] == [(2, 3)]
    assert len(server.log) == 12 and {r.path for r in server.log} == {"/v1/completions"}
    body = server.log[0].body
    assert (body["stop"], body["max_tokens"], body["seed"], body["temperature"]) == (["\n"], 8, 0, 0)
    assert server.log[0].headers["authorization"] == "Bearer EMPTY"  # loopback server: dummy key
    backend.close()


def test_faults_are_retried_then_succeed_without_duplicates(server: FaultServer) -> None:
    server.faults = {
        "prompt 1": ["500"],
        "prompt 3": ["503", "malformed"],
        "prompt 5": ["hang"],
        "prompt 6": ["drop", "no_choices", "429"],
    }
    backend = _backend(server, concurrency=3, max_retries=3)
    gens = backend.generate(_prompts(8), SamplingParams())
    assert [g.text for g in gens] == [f"re: prompt {i}" for i in range(8)]
    assert all(g.error is None for g in gens)
    attempts = {f"prompt {i}": server.attempts(f"prompt {i}") for i in range(8)}
    assert attempts == {"prompt 0": 1, "prompt 1": 2, "prompt 2": 1, "prompt 3": 3, "prompt 4": 1,
                        "prompt 5": 2, "prompt 6": 4, "prompt 7": 1}  # fmt: skip
    backend.close()


def test_exhausted_retries_record_error_and_keep_the_row(server: FaultServer) -> None:
    server.faults = {"prompt 2": ["500"] * 10, "prompt 4": ["hang"] * 10}
    backend = _backend(server, concurrency=4, max_retries=2)
    gens = backend.generate(_prompts(6), SamplingParams())
    assert len(gens) == 6
    assert [g.error is None for g in gens] == [True, True, False, True, False, True]
    assert gens[2].text == "" and gens[2].error is not None and "after 3 attempt(s)" in gens[2].error
    assert "HTTP 500" in gens[2].error
    assert gens[4].error is not None and "timeout" in gens[4].error
    assert server.attempts("prompt 2") == 3 and server.attempts("prompt 4") == 3
    assert gens[5].text == "re: prompt 5"
    backend.close()


def test_client_errors_are_not_retried(server: FaultServer) -> None:
    server.faults = {"prompt 0": ["400"]}
    backend = _backend(server, max_retries=5)
    [gen] = backend.generate(_prompts(1), SamplingParams())
    assert gen.error is not None and "HTTP 400" in gen.error and "after 1 attempt(s)" in gen.error
    assert server.attempts("prompt 0") == 1


def test_chat_mode_and_client_side_stop(server: FaultServer) -> None:
    backend = _backend(server, chat=True)
    prompt = Prompt("x", "aspirin|treats|pain; more")
    [gen] = backend.generate([prompt], SamplingParams(stop=(";",)))
    assert server.log[0].path == "/v1/chat/completions"
    assert server.log[0].body["messages"] == [{"role": "user", "content": "aspirin|treats|pain; more"}]
    assert gen.text == "re: aspirin|treats|pain"


def test_structured_outputs_fields(server: FaultServer) -> None:
    choice = Prompt("a", "prompt a", constraint=OutputConstraint(choices=("y", "n")))
    regex = Prompt("b", "prompt b", constraint=OutputConstraint(regex=r"[^|]+\|[^|]+\|[^|]+"))
    constrained = SamplingParams(constrained=True)
    _backend(server, structured_outputs="vllm").generate([choice, regex], constrained)
    _backend(server, structured_outputs="vllm_legacy").generate([choice, regex], constrained)
    _backend(server, structured_outputs="vllm").generate([choice], SamplingParams(constrained=False))
    bodies = [r.body for r in sorted(server.log[:2], key=lambda r: r.prompt)]
    assert bodies[0]["structured_outputs"] == {"choice": ["y", "n"]}
    assert bodies[1]["structured_outputs"] == {"regex": r"[^|]+\|[^|]+\|[^|]+"}
    legacy = [r.body for r in sorted(server.log[2:4], key=lambda r: r.prompt)]
    assert legacy[0]["guided_choice"] == ["y", "n"] and legacy[1]["guided_regex"] == r"[^|]+\|[^|]+\|[^|]+"
    assert "structured_outputs" not in server.log[4].body


def test_api_key_from_env(server: FaultServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test")
    _backend(server, api_key_env="MY_KEY").generate(_prompts(1), SamplingParams())
    assert server.log[0].headers["authorization"] == "Bearer sk-test"


def test_missing_key_for_remote_server_is_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY"):
        params = {"base_url": "https://x.invalid/v1", "model": "m", "api_key_env": "NO_SUCH_KEY"}
        build_backend("openai", params)


def test_model_is_required_and_digest_names_it(server: FaultServer) -> None:
    with pytest.raises(ConfigError, match="model"):
        build_backend("openai", {"base_url": server.base_url})
    assert _backend(server).model_digest != _backend(server, model="other").model_digest


def test_unreachable_server_gives_error_rows_quickly() -> None:
    backend = build_backend("openai", {"base_url": "http://127.0.0.1:9/v1", **FAST, "max_retries": 1})
    gens = backend.generate(_prompts(3), SamplingParams())
    assert all(g.text == "" and g.error and "connection error" in g.error for g in gens)
    backend.close()
    with pytest.raises(BackendError):
        backend.generate(_prompts(1), SamplingParams())


def test_echo_label_scoring(server: FaultServer) -> None:
    server.faults = {"Answer: maybe so": ["malformed"]}  # the scoring request for one label is retried
    prompt = Prompt("q", "Answer:", constraint=OutputConstraint(choices=("yes", "maybe so")))
    backend = _backend(server, label_scoring="echo")
    [gen] = backend.generate([prompt], SamplingParams(score_labels=True))
    assert gen.text == "re: Answer:" and gen.error is None
    assert gen.label_logprobs == pytest.approx({"yes": -0.3, "maybe so": -0.7})  # -0.1 per character
    echo = [r for r in server.log if r.body.get("echo")]
    assert [(r.prompt, r.body["max_tokens"], r.body["logprobs"]) for r in echo] == [
        ("Answer: yes", 1, 1), ("Answer: maybe so", 1, 1), ("Answer: maybe so", 1, 1)]  # fmt: skip
    off = _backend(server).generate([prompt], SamplingParams(score_labels=True))[0]
    assert off.label_logprobs is None


def test_failed_label_scoring_keeps_text_and_reports(server: FaultServer) -> None:
    server.faults = {"Answer: no": ["500"] * 5}
    prompt = Prompt("q", "Answer:", constraint=OutputConstraint(choices=("yes", "no")))
    backend = _backend(server, label_scoring="echo", max_retries=1)
    [gen] = backend.generate([prompt], SamplingParams(score_labels=True))
    assert gen.text == "re: Answer:" and gen.label_logprobs is None
    assert gen.error is not None and "label scoring of 'no' failed after 2 attempt(s)" in gen.error
