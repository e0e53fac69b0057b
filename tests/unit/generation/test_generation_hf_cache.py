"""`ReservedCache` (no per-token copy of the KV cache) gives `generate` the very outputs of its default
cache, and label scoring runs each prompt once (tiny random-init Llama, float32, exact comparisons)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from biorab.common.records import OutputConstraint, Prompt  # noqa: E402
from biorab.generation import SamplingParams, build_backend  # noqa: E402
from biorab.generation.hf.backend import TransformersBackend  # noqa: E402
from biorab.generation.hf.cache import ReservedCache, cache_kwarg  # noqa: E402
from tests.support.tiny_causal_lm import build_tiny_lm  # noqa: E402

TEXTS = ["Aspirin", "Sentence: metformin lowers blood glucose. Answer:", "Question: which", "ibuprofen|"]
ABCD = OutputConstraint(choices=("(A)", "(B)", "(C)", "(D)"))


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> TransformersBackend:
    folder = build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")
    return build_backend("transformers", {"model": str(folder), "dtype": "float32", "batch_size": 3})


def _generate(backend: TransformersBackend, reserve: int | None, max_new: int) -> tuple[object, ...]:
    tok, model = backend.tokenizer, backend.model
    enc = tok(TEXTS, return_tensors="pt", padding=True)
    layers = model.config.num_hidden_layers
    extra = {} if reserve is None else {cache_kwarg(model): ReservedCache(layers, reserve)}
    with torch.inference_mode():
        out = model.generate(**enc, max_new_tokens=max_new, do_sample=False, output_scores=True,
                             return_dict_in_generate=True, pad_token_id=tok.pad_token_id,
                             **extra)  # fmt: skip
    return out.sequences, out.scores


@pytest.mark.parametrize("reserve", [12, 3])  # 3: fewer positions than tokens, the cache grows on the way
def test_reserved_cache_equals_default_bit_for_bit(backend: TransformersBackend, reserve: int) -> None:
    sequences, scores = _generate(backend, None, 12)
    reserved_sequences, reserved_scores = _generate(backend, reserve, 12)
    assert torch.equal(sequences, reserved_sequences)
    assert len(scores) == len(reserved_scores) == 12
    assert all(torch.equal(a, b) for a, b in zip(scores, reserved_scores, strict=True))


def test_reserved_layer_copies_only_the_new_token(backend: TransformersBackend) -> None:
    cache = ReservedCache(1, reserve=4)
    layer = cache.layers[0]
    first = torch.randn(2, 1, 5, 3)
    keys, _ = cache.update(first, first.clone(), 0)
    buffer = layer._key_buffer
    assert buffer is not None and buffer.shape == (2, 1, 9, 3)
    step = torch.randn(2, 1, 1, 3)
    keys, values = cache.update(step, step.clone(), 0)
    assert layer._key_buffer is buffer and keys.data_ptr() == buffer.data_ptr()  # no new allocation
    assert torch.equal(keys, torch.cat([first, step], dim=-2)) and torch.equal(values, keys)
    assert cache.get_seq_length() == 6


def test_scoring_runs_each_prompt_once(backend: TransformersBackend) -> None:
    shapes: list[tuple[int, int]] = []
    hook = backend.model.register_forward_pre_hook(
        lambda _m, _args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    try:
        gens = backend.generate([Prompt(f"t/{i}", t, constraint=ABCD) for i, t in enumerate(TEXTS)],
                                SamplingParams(max_tokens=4, constrained=True))  # fmt: skip
    finally:
        hook.remove()
    labels = ABCD.choices or ()
    label_tokens = [len(backend.tokenizer(" " + c, add_special_tokens=False)["input_ids"]) for c in labels]
    assert min(label_tokens) > 1  # every label needs the cached continuation pass
    prompt_tokens = [len(backend.tokenizer(t)["input_ids"]) for t in TEXTS]
    assert prompt_tokens == [1, 26, 9, 7]
    # batch_size 3: prompts in batches of 3 and 1 (longest first); a batch's prompts are prefilled in
    # groups of similar length (26, 9 and 7 tokens differ too much to share padding), each prompt once,
    # then its rows' 4 labels run on the joined cache as continuations in passes of <= 3
    cont = max(label_tokens) - 1
    assert shapes == [(1, 26), (1, 9), (1, 7), *[(3, cont)] * 4, (1, 1), (3, cont), (1, cont)]
    for gen in gens:
        assert gen.label_logprobs is not None and list(gen.label_logprobs) == list(labels)
        assert gen.text == max(gen.label_logprobs, key=gen.label_logprobs.__getitem__)
