"""Backend capabilities are data on the backend class; every decision asks them, never the name
(issue 34): a new backend that declares a prefix cache gets prefix order, one that declares local weights
gets its known model prepared and its load deferred."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from biorab.common.registry import BACKENDS
from biorab.execution import ExecutionRequest
from biorab.generation.capabilities import Capabilities, capabilities_of, takes_param
from biorab.generation.deferred import planned_digest
from biorab.generation.fake import FakeBackend
from biorab.generation.model_info import model_info

REPO = Path(__file__).resolve().parents[3]


def test_builtin_backends_declare_their_capabilities() -> None:
    assert capabilities_of("fake") == Capabilities()
    assert capabilities_of("openai") == Capabilities(server_client=True)
    assert capabilities_of("transformers") == Capabilities(local_weights=True, deferred_load=True)
    assert capabilities_of("vllm") == Capabilities(
        local_weights=True, deferred_load=True, prefix_cache=True, tensor_parallel=True,
        async_engine="biorab.generation.vllm.async_engine:AsyncVLLMBackend", switches_adapters=True)
    assert capabilities_of("vllm") is BACKENDS.get("vllm").capabilities


def test_transformers_capabilities_are_read_without_torch() -> None:
    code = ("import sys\nfrom biorab.generation.capabilities import capabilities_of\n"
            "assert capabilities_of('transformers').deferred_load\n"
            "heavy = ('torch', 'transformers', 'biorab.generation.hf.backend')\n"
            "print(','.join(m for m in heavy if m in sys.modules))\n"
            "from biorab.common.registry import BACKENDS\n"
            "assert BACKENDS.get('transformers').capabilities is capabilities_of('transformers')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


class _Choice:
    def __init__(self, name: str, params: dict) -> None:
        self.name, self.params = name, params


def test_a_backend_without_local_weights_is_digested_by_its_class() -> None:
    params = {"mode": "choice"}
    built = FakeBackend(FakeBackend.Params(mode="choice"))
    assert model_info(_Choice("fake", params)).digest == built.model_digest
    assert planned_digest("fake", params) is None  # nothing to defer: built at once


@pytest.fixture
def prefix_backend(monkeypatch: pytest.MonkeyPatch) -> str:
    """A fake backend registered under another name, declaring a prefix cache."""

    class PrefixFake(FakeBackend):
        capabilities = Capabilities(prefix_cache=True)

    monkeypatch.setitem(BACKENDS._objects, "prefix_fake", PrefixFake)
    return "prefix_fake"


def test_prefix_order_follows_the_capability_not_the_name(prefix_backend: str) -> None:
    from types import SimpleNamespace

    def request(backend: str, retrieves: bool = True) -> ExecutionRequest:
        pipeline = SimpleNamespace(retrieves=lambda: retrieves)
        config = SimpleNamespace(backend=SimpleNamespace(name=backend))
        return ExecutionRequest([], pipeline, config, write=list, order=list)  # type: ignore[arg-type]

    assert request(prefix_backend).prefix_ordered(None) is True
    assert request("fake").prefix_ordered(None) is False
    assert request("vllm").prefix_ordered(None) is True
    assert request("fake").prefix_ordered(True) is True  # forced by the executor
    assert request(prefix_backend, retrieves=False).prefix_ordered(True) is False  # nothing retrieved


def test_params_facts_are_read_from_the_params_model() -> None:
    # what a sweep profile's params may carry, asked of each backend's Params model instead of its name
    assert (takes_param("fake", "model"), takes_param("transformers", "model")) == (False, True)
    assert [takes_param(b, "thinking") for b in ("fake", "transformers", "vllm", "openai")] == [
        True, True, True, False]
    assert [takes_param(b, "reasoning_effort") for b in ("fake", "openai")] == [False, True]
    assert takes_param("no-such-backend", "model") is False


def test_thinking_key_is_the_params_own_rule() -> None:
    from biorab.generation.openai.params import OpenAIParams
    from biorab.generation.reasoning import ThinkingParams, thinking_key

    assert thinking_key(FakeBackend.Params()) is None
    for thinking in (ThinkingParams(split=True), ThinkingParams(token_budget=8)):
        assert thinking_key(FakeBackend.Params(thinking=thinking)) == "backend.params.thinking"
    assert thinking_key(OpenAIParams(model="gpt-4o")) is None
    assert thinking_key(OpenAIParams(model="gpt-4o", think_split=True)) == "backend.params.think_split"
    assert thinking_key(OpenAIParams(model="gpt-4o", thinking_token_budget=16)) == (
        "backend.params.thinking_token_budget")
    assert thinking_key(OpenAIParams(model="gpt-4o", reasoning=True)) == "backend.params.model"
