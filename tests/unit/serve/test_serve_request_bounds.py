"""One request must not fail its neighbours, nor buy unbounded work (issue 40 items 2 and 3).

The generator's batch on the transformers backend (a tiny random Llama): a row whose sampling makes the
backend raise (seed 2^64: ``torch.manual_seed`` refuses it) gets an error row while its batch-mate gets the
very generation it gets alone. The request side: a seed of 2^64, ``max_tokens`` 10^9, 5,000 labels and a
lone surrogate are refused with a 4xx naming the field (the same requests over HTTP, through the official
openai client: tests/ray/test_serve_app.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from biorab.common.records import OutputConstraint, Prompt
from biorab.generation.base import SamplingParams
from serve.answering import check_labels, check_sampling
from serve.config import load_serve_config
from serve.deadlines import Ticket
from serve.errors import ApiError, validation_error
from serve.generator import FAILED, Generator
from serve.schemas import SEED_MAX, ChatRequest, RALRequest

pytest.importorskip("transformers")


def chat(**extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "aspirin and headache"}], **extra}


def refusal(body: dict[str, Any], model: type[ChatRequest] | type[RALRequest] = ChatRequest) -> ApiError:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    return validation_error(list(caught.value.errors()))


# -- the batch on the transformers backend ----------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.support.tiny_causal_lm import build_tiny_lm

    return build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")


def transformers_generator(model: Path) -> Any:
    backend = {"name": "transformers", "params": {"model": str(model), "dtype": "float32"}}
    return Generator.func_or_class(backend, max_batch_size=4)  # type: ignore[attr-defined]


def test_a_row_that_fails_in_the_backend_leaves_its_batch_mate_its_answer(tiny: Path) -> None:
    gen = transformers_generator(tiny)
    good, bad = Prompt("good", "Sentence: aspirin treats headache. Answer:"), Prompt("bad", "Question: which")
    sampling = SamplingParams(max_tokens=5, temperature=0.7, seed=3)
    poisoned = sampling.model_copy(update={"seed": 2**64})  # what a request's seed did before validation
    with pytest.raises(ValueError, match="Overflow"):  # what failed the whole batch: torch refuses the seed
        gen.backend.generate([bad], poisoned)
    alone = asyncio.run(gen.run_batch([(good, sampling, Ticket())]))
    both = asyncio.run(gen.run_batch([(good, sampling, Ticket()), (bad, poisoned, Ticket())]))
    assert alone[0].error is None and alone[0].completion_tokens > 0
    assert both[0] == alone[0]  # the batch-mate's generation, exactly as generated alone
    assert both[1].error == FAILED and both[1].text == ""


def test_a_failing_prompt_in_a_shared_call_fails_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = {"name": "fake", "params": {"mode": "fixed", "answer": "yes"}}
    gen = Generator.func_or_class(fixed, max_batch_size=4)  # type: ignore[attr-defined]
    real = gen.backend.generate
    calls: list[int] = []

    def generate(prompts: list[Prompt], sampling: SamplingParams) -> list[Any]:
        calls.append(len(prompts))
        if any("boom" in p.text for p in prompts):
            raise ValueError("this prompt breaks the backend")
        return list(real(prompts, sampling))

    monkeypatch.setattr(gen.backend, "generate", generate)
    sampling = SamplingParams(max_tokens=4)
    prompts = [Prompt("a", "first prompt"), Prompt("b", "boom here"), Prompt("c", "third prompt")]
    out = asyncio.run(gen.run_batch([(p, sampling, Ticket()) for p in prompts]))
    expected = [real([p], sampling)[0] for p in (prompts[0], prompts[2])]  # each generated alone
    assert [out[0], out[2]] == expected and out[0].text == "yes" and out[1].error == FAILED
    assert calls == [3, 1, 1, 1]  # the shared call, then each prompt alone


def test_labels_scored_as_continuations_count_against_the_context() -> None:
    fixed = {"name": "fake", "params": {"mode": "fixed"}}
    gen = Generator.func_or_class(fixed, context_tokens=10)  # type: ignore[attr-defined]
    sampling = SamplingParams(max_tokens=2)
    short = Prompt("a", "one two three four", constraint=OutputConstraint(choices=("yes", "no")))
    long_label = "w " * 7  # 7 words: 4 + 7 > 10, though 4 + max_tokens 2 fits
    wide = Prompt("b", "one two three four", constraint=OutputConstraint(choices=("yes", long_label)))
    ok, refused = asyncio.run(gen.run_batch([(short, sampling, Ticket()), (wide, sampling, Ticket())]))
    assert ok.error is None
    assert refused.error == ("prompt has 4 tokens; with a label of 7 tokens to score it exceeds the model's "
                             "context of 10 tokens")


# -- the request side -------------------------------------------------------------------------------------


def test_a_seed_beyond_int64_is_a_422_naming_the_field() -> None:
    error = refusal(chat(seed=2**64))
    assert (error.status, error.param) == (422, "seed")
    assert error.message == f"field 'seed': Input should be less than or equal to {SEED_MAX}"
    assert refusal(chat(seed=-1)).message == "field 'seed': Input should be greater than or equal to 0"
    assert ChatRequest.model_validate(chat(seed=SEED_MAX)).seed == 2**63 - 1


def test_request_sampling_is_validated_whole_and_max_tokens_bounded() -> None:
    cfg = load_serve_config(overrides={"limits": {"max_tokens": 256}, "sampling": {"max_tokens": 32}})
    (ral,) = cfg.rals
    with pytest.raises(ApiError) as caught:
        check_sampling(ral, cfg.limits, {"max_tokens": 10**9})
    assert (caught.value.status, caught.value.message) == (
        422, "field 'max_tokens': 1000000000 exceeds the limit of 256")
    with pytest.raises(ApiError) as caught:
        check_sampling(ral, cfg.limits, {"top_p": 0.0})  # what model_copy let through
    assert caught.value.status == 422 and caught.value.message.startswith("field 'top_p': ")
    merged = check_sampling(ral, cfg.limits, {"max_tokens": 256, "seed": 7, "temperature": 0.5})
    assert merged == ral.sampling.model_copy(update={"max_tokens": 256, "seed": 7, "temperature": 0.5})
    assert check_sampling(ral, cfg.limits, {}) is None


def test_labels_are_bounded_in_count_and_length() -> None:
    limits = load_serve_config(overrides={"limits": {"max_labels": 64, "max_label_chars": 20}}).limits
    with pytest.raises(ApiError) as caught:
        check_labels(limits, [f"label {i}" for i in range(5000)])
    assert (caught.value.status, caught.value.message) == (
        422, "field 'labels': 5000 labels exceed the limit of 64")
    with pytest.raises(ApiError) as caught:
        check_labels(limits, ["yes", "x" * 21])
    assert caught.value.message == "field 'labels.1': 21 characters exceed the limit of 20"
    with pytest.raises(ApiError, match=r"field 'labels.0': an empty label"):
        check_labels(limits, [" ", "no"])
    check_labels(limits, ["yes", "x" * 20])  # at the limits: accepted


def test_a_lone_surrogate_is_a_400_naming_where_it_is() -> None:
    error = refusal(chat(messages=[{"role": "user", "content": "rash after \ud800 aspirin"}]))
    assert (error.status, error.param) == (400, "messages.0.content")
    assert error.message == ("field 'messages.0.content': not valid Unicode text (a lone surrogate \\ud800 "
                             "at character 11)")
    deep = refusal({"input": "ok", "fields": {"options": ["a", "\udfff"]}}, RALRequest)
    assert (deep.status, deep.param) == (400, "fields.options.1")
    ChatRequest.model_validate(chat(messages=[{"role": "user", "content": "caf\u00e9 \U0001f48a"}]))
