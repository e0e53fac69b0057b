"""The transformers backend on a tiny random-init Llama saved to a temp folder (no hub, ~1 s to build).

Exact comparisons are fine here: the same float32 weights and greedy decoding, in one process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from biorab.common.records import OutputConstraint, Prompt  # noqa: E402
from biorab.generation import SamplingParams, build_backend  # noqa: E402
from biorab.generation.base import continuation_text  # noqa: E402
from biorab.generation.hf.backend import TransformersBackend  # noqa: E402
from tests.support.tiny_causal_lm import build_tiny_lm, build_tiny_lora  # noqa: E402

TEXTS = [
    "Aspirin",
    "Sentence: metformin lowers blood glucose. Answer:",
    "Question: which",
    "the patient walked home and",
    "ibuprofen|effect|",
]
YN = OutputConstraint(choices=("y", "n", "maybe so"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")


@pytest.fixture(scope="module")
def backend(tiny: Path) -> TransformersBackend:
    return build_backend("transformers", {"model": str(tiny), "dtype": "float32", "batch_size": 3})


def _tiny(folder: Path, **extra: object) -> TransformersBackend:
    return build_backend("transformers", {"model": str(folder), "dtype": "float32", **extra})


def _prompts(texts: list[str] = TEXTS, **kwargs: object) -> list[Prompt]:
    return [Prompt(f"t/test/{i}", text, **kwargs) for i, text in enumerate(texts)]  # type: ignore[arg-type]


def test_batched_left_padded_equals_one_by_one(tiny: Path, backend: TransformersBackend) -> None:
    single = build_backend("transformers", {"model": str(tiny), "dtype": "float32", "batch_size": 1})
    params = SamplingParams(max_tokens=10)
    batched = backend.generate(_prompts(), params)
    alone = single.generate(_prompts(), params)
    assert [(g.text, g.completion_tokens) for g in batched] == [(g.text, g.completion_tokens) for g in alone]
    assert all(g.finish_reason == "length" and g.completion_tokens == 10 for g in batched)
    assert [g.prompt_tokens for g in batched] == [len(backend.tokenizer(t)["input_ids"]) for t in TEXTS]
    # order is the input order even though batches are formed by length
    assert batched[2].text == single.generate(_prompts([TEXTS[2]]), params)[0].text


def test_stop_string_cuts_text_and_stops_early(backend: TransformersBackend) -> None:
    params = SamplingParams(max_tokens=12)
    free = backend.generate(_prompts([TEXTS[3]]), params)[0]
    # Pick a stop string from the middle of the unconstrained continuation.
    ascii_chars = [i for i, c in enumerate(free.text) if c.isascii() and c.isprintable() and i >= 2]
    cut = ascii_chars[0]
    stop = free.text[cut]
    expected = free.text[: free.text.index(stop)]
    stopped = backend.generate(_prompts([TEXTS[3]], stop=(stop,)), params)[0]
    assert stopped.text == expected
    assert stopped.finish_reason == "stop"
    assert 0 < stopped.completion_tokens < 12
    # the global stop list works the same, and stops never leak into the text
    via_params = backend.generate(_prompts([TEXTS[3]]), SamplingParams(max_tokens=12, stop=(stop,)))[0]
    assert via_params.text == expected and stop not in via_params.text


def test_eos_ends_a_row(tmp_path: Path) -> None:
    folder = build_tiny_lm(tmp_path / "eos", zero_final_norm=True)  # all logits 0 -> token 0 = <eos>
    backend = build_backend("transformers", {"model": str(folder), "dtype": "float32"})
    gens = backend.generate(_prompts(TEXTS[:2]), SamplingParams(max_tokens=8))
    assert [(g.text, g.completion_tokens, g.finish_reason) for g in gens] == [("", 1, "stop")] * 2


def _direct_logprob(model: object, tokenizer: object, prompt: str, label: str) -> float:
    prompt_ids = tokenizer(prompt)["input_ids"]  # type: ignore[operator]
    cont = tokenizer(continuation_text(prompt, label), add_special_tokens=False)["input_ids"]  # type: ignore[operator]
    ids = torch.tensor([prompt_ids + cont])
    with torch.no_grad():
        logprobs = torch.log_softmax(model(input_ids=ids).logits[0].float(), dim=-1)  # type: ignore[operator]
    return float(sum(logprobs[len(prompt_ids) - 1 + k, t] for k, t in enumerate(cont)))


def test_label_logprobs_match_unpadded_forward(backend: TransformersBackend) -> None:
    prompts = _prompts(constraint=YN)
    gens = backend.generate(prompts, SamplingParams(max_tokens=4, score_labels=True, constrained=False))
    for prompt, gen in zip(prompts, gens, strict=True):
        assert gen.label_logprobs is not None and list(gen.label_logprobs) == ["y", "n", "maybe so"]
        for label, value in gen.label_logprobs.items():
            direct = _direct_logprob(backend.model, backend.tokenizer, prompt.text, label)
            assert value == pytest.approx(direct, abs=1e-4)
        assert gen.completion_tokens == 4  # free generation still ran


def test_constrained_answer_is_argmax_label(backend: TransformersBackend) -> None:
    prompts = _prompts(constraint=YN) + _prompts(["no constraint here"])
    gens = backend.generate(prompts, SamplingParams(max_tokens=4, constrained=True))
    for gen in gens[:-1]:
        assert gen.label_logprobs is not None
        assert gen.text == max(gen.label_logprobs, key=gen.label_logprobs.__getitem__)
        assert gen.finish_reason == "stop"
    assert gens[-1].label_logprobs is None and gens[-1].completion_tokens == 4


def test_sampling_is_seeded(backend: TransformersBackend) -> None:
    def sample(seed: int) -> list[str]:
        params = SamplingParams(max_tokens=8, temperature=1.0, seed=seed)
        return [g.text for g in backend.generate(_prompts(), params)]

    state = torch.random.get_rng_state()
    assert sample(5) == sample(5)
    assert sample(5) != sample(6)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG is left alone


def test_prompt_over_context_is_an_error_row(backend: TransformersBackend) -> None:
    long_text = "Aspirin treats headache. " * 40
    gens = backend.generate(_prompts([TEXTS[0], long_text]), SamplingParams(max_tokens=8))
    assert gens[0].error is None and gens[0].completion_tokens == 8
    assert gens[1].text == "" and gens[1].error is not None and "context of 128 tokens" in gens[1].error


def test_chat_mode_wraps_prompt_in_template(tiny: Path, backend: TransformersBackend) -> None:
    chat = build_backend("transformers", {"model": str(tiny), "dtype": "float32", "chat": True})
    gen = chat.generate(_prompts([TEXTS[1]]), SamplingParams(max_tokens=2))[0]
    templated = f"<|user|>{TEXTS[1]}\n<|assistant|>"
    assert gen.prompt_tokens == len(backend.tokenizer(templated, add_special_tokens=False)["input_ids"])


def test_model_digest_is_content_based(tiny: Path, tmp_path: Path, backend: TransformersBackend) -> None:
    copy = shutil.copytree(tiny, tmp_path / "elsewhere")
    same = build_backend("transformers", {"model": str(copy), "dtype": "float32"})
    assert same.model_digest == backend.model_digest
    other = _tiny(build_tiny_lm(tmp_path / "seed1", seed=1))
    assert other.model_digest != backend.model_digest
    bf16 = build_backend("transformers", {"model": str(tiny), "dtype": "bfloat16"})
    assert bf16.model_digest != backend.model_digest


def test_peft_adapter_changes_outputs_and_digest(
    tiny: Path, tmp_path: Path, backend: TransformersBackend
) -> None:
    pytest.importorskip("peft")
    adapter = build_tiny_lora(tiny, tmp_path / "lora")
    params = SamplingParams(max_tokens=4, score_labels=True)
    merged = _tiny(tiny, adapter_path=str(adapter))
    unmerged = _tiny(tiny, adapter_path=str(adapter), merge_adapter=False)
    base_scores = backend.generate(_prompts(constraint=YN), params)
    merged_scores = merged.generate(_prompts(constraint=YN), params)
    unmerged_scores = unmerged.generate(_prompts(constraint=YN), params)
    assert merged.model_digest != backend.model_digest
    assert merged.model_digest == unmerged.model_digest  # merging is an execution detail, not new weights
    for base, a, b in zip(base_scores, merged_scores, unmerged_scores, strict=True):
        assert a.label_logprobs and b.label_logprobs and base.label_logprobs
        assert a.label_logprobs["y"] == pytest.approx(b.label_logprobs["y"], abs=1e-4)
        assert abs(a.label_logprobs["y"] - base.label_logprobs["y"]) > 1e-3


def test_closed_backend_refuses_work(tiny: Path) -> None:
    from biorab.common.errors import BackendError

    b = build_backend("transformers", {"model": str(tiny), "dtype": "float32"})
    b.close()
    b.close()
    with pytest.raises(BackendError):
        b.generate(_prompts(), SamplingParams())
