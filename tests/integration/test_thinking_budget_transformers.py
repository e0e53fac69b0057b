"""The thinking budget on the transformers backend with the packaged SmolLM2 (no ``<think>`` tokens of its
own: the prompt opens ``<think>`` as text, as a thinking model's chat template does): the reasoning is cut
at the budget, the close marker appended, and the answer is a second generate call on the extended prompt."""

from __future__ import annotations

import pytest

from biorab.common.records import Prompt
from biorab.generation import SamplingParams, build_backend

pytest.importorskip("transformers")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

PROMPTS = ["Question: Does aspirin inhibit COX-1? Think first.\n<think>",
           "Question: Name a statin.\n<think>"]


def test_reasoning_cut_at_the_budget_then_the_answer_from_a_second_pass() -> None:
    import torch

    base = {"model": "smollm2", "dtype": "float32", "batch_size": 2}
    budget, answer_tokens = 3, 5
    backend = build_backend("transformers", {**base, "thinking": {"split": True, "token_budget": budget}})
    prompts = [Prompt(f"q{i}", text) for i, text in enumerate(PROMPTS)]
    gens = backend.generate(prompts, SamplingParams(max_tokens=answer_tokens))
    tok, model = backend.tokenizer, backend.model
    marker = tok("</think>", add_special_tokens=False)["input_ids"]
    for prompt, gen in zip(PROMPTS, gens, strict=True):
        ids = tok(prompt)["input_ids"]
        with torch.inference_mode():  # the budget's tokens, then the marker, then the answer: greedy, by hand
            head = model.generate(torch.tensor([ids]), max_new_tokens=budget, do_sample=False,
                                  pad_token_id=tok.eos_token_id)[0, len(ids):].tolist()
            extended = ids + head + marker
            tail = model.generate(torch.tensor([extended]), max_new_tokens=answer_tokens, do_sample=False,
                                  pad_token_id=tok.eos_token_id)[0, len(extended):].tolist()
        assert "</think>" not in tok.decode(head)  # SmolLM2 did not close it: the budget did
        assert gen.reasoning == tok.decode(head, skip_special_tokens=True).strip()
        whole = tok.decode(head + marker + tail, skip_special_tokens=True)
        assert gen.text == whole.split("</think>")[1].strip()
        assert gen.text  # the answer exists only because the second pass ran
        assert gen.completion_tokens == budget + len(marker) + len(tail) and gen.finish_reason == "length"
    # without a budget the reply never closes its reasoning: nothing to split, no answer apart from it
    plain = build_backend("transformers", {**base, "thinking": {"split": True}})
    unsplit = plain.generate(prompts, SamplingParams(max_tokens=answer_tokens))
    assert all(g.reasoning is None and "</think>" not in g.text for g in unsplit)
    assert plain.model_digest != backend.model_digest
