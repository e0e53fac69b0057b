"""The thinking budget on the offline vLLM engine (SmolLM2, which has no ``<think>`` tokens: the prompt
opens ``<think>`` as text): the reasoning is cut at the budget, the close marker appended, and the answer
is a second engine request on the extended prompt, equal to that request made by hand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from biorab.common.records import Prompt
from biorab.generation import SamplingParams, build_backend
from tests.support.vllm_settings import ENGINE

pytestmark = [pytest.mark.timeout(600)]
PROMPTS = ["Question: Does aspirin inhibit COX-1? Think first.\n<think>", "Question: Name a statin.\n<think>"]


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    b = build_backend("vllm", {**ENGINE, "thinking": {"split": True, "token_budget": 3}})
    yield b
    b.close()


def test_reasoning_cut_at_the_budget_then_the_answer_from_a_second_request(backend: Any) -> None:
    import vllm

    gens = backend.generate([Prompt(f"q{i}", t) for i, t in enumerate(PROMPTS)], SamplingParams(max_tokens=5))
    tok = backend.tokenizer
    marker = tok("</think>", add_special_tokens=False)["input_ids"]
    for text, gen in zip(PROMPTS, gens, strict=True):
        ids = tok(text)["input_ids"]
        [head] = backend.llm.generate([{"prompt_token_ids": ids}], vllm.SamplingParams(max_tokens=3,
                                      temperature=0.0), use_tqdm=False)
        head_ids = list(head.outputs[0].token_ids)
        extended = ids + head_ids + marker
        [tail] = backend.llm.generate([{"prompt_token_ids": extended}], vllm.SamplingParams(max_tokens=5,
                                      temperature=0.0), use_tqdm=False)
        tail_ids = list(tail.outputs[0].token_ids)
        assert "</think>" not in head.outputs[0].text and len(head_ids) == 3
        assert gen.reasoning == tok.decode(head_ids, skip_special_tokens=True).strip()
        whole = tok.decode(head_ids + marker + tail_ids, skip_special_tokens=True)
        assert gen.text == whole.split("</think>")[1].strip() and gen.text
        assert gen.completion_tokens == 3 + len(marker) + len(tail_ids)
