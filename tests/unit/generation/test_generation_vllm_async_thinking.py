"""Serve's async vLLM engine splits a thinking reply as the other backends do (`thinking: {split: true}`),
and refuses a thinking budget it does not run; Serve's responses carry the reasoning beside the answer.
The engine is a scripted stand-in (no vLLM needed): what is tested is the backend's own handling of the
engine's outputs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from biorab.common.errors import BackendError
from biorab.common.records import Prompt
from biorab.generation.base import SamplingParams
from biorab.generation.vllm.async_engine import AsyncVLLMBackend
from biorab.generation.vllm.engine import VLLMBackend

REPLY = "<think>COX-1 is inhibited.</think>\n\nYES"


class _Tokenizer:
    def __call__(self, text: str, add_special_tokens: bool = True) -> dict[str, list[int]]:
        return {"input_ids": [ord(c) for c in text]}


class _Engine:
    """Answers every request with `REPLY`, as `AsyncLLM.generate` streams its final output."""

    async def generate(self, prompt: dict[str, list[int]], sampling: Any, request_id: str,
                       lora_request: Any = None) -> AsyncIterator[Any]:
        done = SimpleNamespace(text=REPLY, token_ids=list(range(7)), finish_reason="stop")
        yield SimpleNamespace(prompt_token_ids=prompt["prompt_token_ids"], outputs=[done])


def _backend(thinking: dict[str, Any]) -> AsyncVLLMBackend:
    backend = AsyncVLLMBackend.__new__(AsyncVLLMBackend)  # the engine start (vLLM) left out
    backend.params = VLLMBackend.Params(thinking=thinking)
    backend.engine, backend.tokenizer, backend._lora = _Engine(), _Tokenizer(), None
    backend._on_cpu, backend._running = True, {}
    backend._ids = iter(range(100))  # type: ignore[assignment]
    return backend


def _generate(backend: AsyncVLLMBackend) -> Any:
    from unittest import mock

    with mock.patch("biorab.generation.vllm.engine._vllm_sampling", lambda params, prompt: params):
        [gen] = asyncio.run(backend.agenerate([Prompt("q", "Does aspirin inhibit COX-1?")], SamplingParams()))
    return gen


def test_a_served_thinking_reply_is_split() -> None:
    gen = _generate(_backend({"split": True}))
    assert (gen.text, gen.reasoning, gen.completion_tokens) == ("YES", "COX-1 is inhibited.", 7)
    whole = _generate(_backend({}))
    assert (whole.text, whole.reasoning) == (REPLY, None)


def test_a_thinking_budget_is_refused_on_serve() -> None:
    with pytest.raises(BackendError, match=r"thinking\.token_budget"):
        AsyncVLLMBackend(VLLMBackend.Params(thinking={"token_budget": 8}))  # type: ignore[arg-type]


def test_served_responses_carry_the_reasoning_beside_the_answer() -> None:
    from serve.answering import generation
    from serve.openai_format import chat_completion

    gen = _generate(_backend({"split": True}))
    answer: Any = SimpleNamespace(generation=gen)
    [choice] = chat_completion(answer, "m", "r", {})["choices"]
    assert choice["message"] == {"role": "assistant", "content": "YES",
                                 "reasoning_content": "COX-1 is inhibited."}
    assert generation(answer)["reasoning"] == "COX-1 is inhibited."
    plain: Any = SimpleNamespace(generation=_generate(_backend({})))
    assert "reasoning_content" not in chat_completion(plain, "m", "r", {})["choices"][0]["message"]
    assert "reasoning" not in generation(plain)
