"""Prefill without padding (`biorab.generation.hf.prefill`): groups of similar length, one joined
left-padded cache equal to a padded prefill's at every real position, and `generate` on it makes the
padded prefill's tokens (tiny random-init Llama, float32)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from biorab.common.records import Prompt  # noqa: E402
from biorab.generation import SamplingParams, build_backend  # noqa: E402
from biorab.generation.hf.backend import TransformersBackend  # noqa: E402
from biorab.generation.hf.prefill import length_groups, prefill, prefix_families  # noqa: E402
from tests.support.tiny_causal_lm import build_tiny_lm  # noqa: E402

TEXTS = [
    "Aspirin",
    "Sentence: metformin lowers blood glucose. Answer:",
    "Question: which",
    "the patient walked home and",
    "ibuprofen|effect|",
]


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> TransformersBackend:
    folder = build_tiny_lm(tmp_path_factory.mktemp("tiny") / "lm")
    return build_backend("transformers", {"model": str(folder), "dtype": "float32", "batch_size": 8})


def test_length_groups_keep_padding_within_a_tenth() -> None:
    # the smoke job's ADE triple batch: one 569-token BM25 prompt among 15 of 154-284 tokens
    lengths = [154, 157, 162, 176, 177, 183, 188, 189, 196, 198, 231, 236, 244, 282, 284, 569]
    groups = length_groups(lengths, max_rows=16)
    assert groups == [[15], [14, 13, 12, 11], [10, 9], [8, 7, 6, 5, 4, 3, 2, 1], [0]]
    for group in groups:
        real = sum(lengths[i] for i in group)
        assert lengths[group[0]] * len(group) <= 1.1 * real
    assert sorted(i for g in groups for i in g) == list(range(16))
    assert length_groups([5, 0, 5, 5], max_rows=2) == [[0, 2], [3]]  # empty rows have nothing to prefill


def _padded(model: object, seqs: list[list[int]], pad: int) -> tuple[torch.Tensor, object, torch.Tensor]:
    from transformers import DynamicCache

    width = max(len(s) for s in seqs)
    ids = torch.tensor([[pad] * (width - len(s)) + s for s in seqs])
    mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in seqs])
    cache = DynamicCache(config=model.config)  # type: ignore[attr-defined]
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, logits_to_keep=1)  # type: ignore[operator]
    return out.logits[:, -1, :], cache, mask


def test_joined_cache_equals_a_padded_prefill(backend: TransformersBackend) -> None:
    tok, model, pad = backend.tokenizer, backend.model, backend.tokenizer.pad_token_id
    seqs = [list(tok(t)["input_ids"]) for t in TEXTS]
    with torch.inference_mode():
        logits, cache, mask = _padded(model, seqs, pad)
        done = prefill(model, seqs, reserve=4, pad_id=pad, keep_logits=True)
    assert torch.equal(done.mask, mask)
    assert done.last_logits is not None
    torch.testing.assert_close(done.last_logits, logits, atol=1e-5, rtol=1e-5)
    real = mask.bool()[:, None, :, None]
    for joined, padded in zip(done.cache.layers, cache.layers, strict=True):
        assert joined.keys.shape == padded.keys.shape  # same width: the reserve is spare, not visible
        torch.testing.assert_close(joined.keys * real, padded.keys * real, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(joined.values * real, padded.values * real, atol=1e-5, rtol=1e-5)
        assert not joined.keys.masked_select(~real.expand_as(joined.keys)).any()  # padding holds zeros


def test_generate_on_the_joined_cache_makes_the_padded_prefill_tokens(backend: TransformersBackend) -> None:
    tok, model = backend.tokenizer, backend.model
    enc = tok(TEXTS, return_tensors="pt", padding=True)  # left padding, pad = eos (the backend's tokenizer)
    with torch.inference_mode():
        padded = model.generate(**enc, max_new_tokens=10, do_sample=False, pad_token_id=tok.pad_token_id)
    widths: list[int] = []
    hook = model.register_forward_pre_hook(
        lambda _m, _args, kwargs: widths.append(int(kwargs["input_ids"].numel())), with_kwargs=True)
    try:
        gens = backend.generate([Prompt(f"t/{i}", t) for i, t in enumerate(TEXTS)],
                                SamplingParams(max_tokens=10))  # fmt: skip
    finally:
        hook.remove()
    expected = [tok.decode(row[enc["input_ids"].shape[1] :], skip_special_tokens=True) for row in padded]
    assert [g.text for g in gens] == expected
    lengths = [len(tok(t)["input_ids"]) for t in TEXTS]
    # prefill: every prompt but its last token, unpadded within 10%; then 10 steps of 5 rows
    prefilled = sum(widths[:-10])
    assert sum(n - 1 for n in lengths) <= prefilled <= 1.1 * sum(n - 1 for n in lengths)
    assert widths[-10:] == [5] * 10


SHARED = "Below is an instruction that describes a task. Extract the adverse drug event from the sentence. "
FAMILY = [SHARED + "Sentence: aspirin caused a rash.", SHARED + "Sentence: no event", "Question: which"]


def test_prefix_families_split_where_it_saves_most() -> None:
    first, second = [7] * 20, [7] * 10 + [8] * 30  # share 10 tokens; each template's rows share more
    seqs = [first + [1, 2], first + [3], second + [4], second + [5, 6], second + [9], [7, 7]]
    assert prefix_families(seqs) == [(20, [0, 1]), (40, [2, 3, 4])]
    assert prefix_families([[1] * 20, [1] * 20]) == [(19, [0, 1])]  # a row keeps one token of its own
    assert prefix_families([[1] * 10 + [2], [1] * 10 + [3]]) == []  # under MIN_SHARED_PREFIX


def test_a_shared_prefix_runs_once_and_joins_the_padded_cache(backend: TransformersBackend) -> None:
    tok, model, pad = backend.tokenizer, backend.model, backend.tokenizer.pad_token_id
    seqs = [list(tok(t)["input_ids"]) for t in FAMILY]
    (shared, rows), = prefix_families(seqs)
    assert sorted(rows) == [0, 1] and shared >= 16
    widths: list[tuple[int, int]] = []
    hook = model.register_forward_pre_hook(
        lambda _m, _args, kwargs: widths.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    try:
        with torch.inference_mode():
            done = prefill(model, seqs, reserve=0, pad_id=pad, keep_logits=True)
    finally:
        hook.remove()
    own = sorted((len(seqs[0]) - shared, len(seqs[1]) - shared), reverse=True)
    grouped = own[0] * 2 <= 1.1 * sum(own)
    expected = [(1, shared), *([(2, own[0])] if grouped else [(1, own[0]), (1, own[1])]), (1, len(seqs[2]))]
    assert widths == expected  # the prefix once, the rows' own tokens, the unrelated prompt alone
    with torch.inference_mode():
        logits, cache, mask = _padded(model, seqs, pad)
    assert done.last_logits is not None
    torch.testing.assert_close(done.last_logits, logits, atol=1e-5, rtol=1e-5)
    real = mask.bool()[:, None, :, None]
    for joined, padded in zip(done.cache.layers, cache.layers, strict=True):
        torch.testing.assert_close(joined.keys * real, padded.keys * real, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(joined.values * real, padded.values * real, atol=1e-5, rtol=1e-5)


def test_generate_after_a_shared_prefix_makes_the_padded_prefill_tokens(backend: TransformersBackend) -> None:
    tok, model = backend.tokenizer, backend.model
    enc = tok(FAMILY, return_tensors="pt", padding=True)
    with torch.inference_mode():
        padded = model.generate(**enc, max_new_tokens=8, do_sample=False, pad_token_id=tok.pad_token_id)
    gens = backend.generate([Prompt(f"f/{i}", t) for i, t in enumerate(FAMILY)], SamplingParams(max_tokens=8))
    width = enc["input_ids"].shape[1]
    assert [g.text for g in gens] == [tok.decode(row[width:], skip_special_tokens=True) for row in padded]
