"""Label scoring with a causal LM: log P(label | prompt) for each label of a closed label set.

This gives `Generation.label_logprobs` (for AUROC/AUPRC) and constrained decoding for closed label sets
(the answer is the best-scoring label). Each label is scored as a continuation of the prompt: the label's
tokens are appended to the prompt's tokens, with one leading space when the prompt does not end in
whitespace (so ``"Answer:"`` + ``"y"`` is scored as ``"Answer: y"``, the way the model would write it).

The prompt is run once per request, not once per label: one prefill of the prompts (sorted by length,
in groups of similar length, `biorab.generation.hf.prefill`) gives the distribution of every label's
first token and the prompts' KV cache; the remaining tokens of the labels (``"(A)"`` is three tokens)
then run as short continuations on that cache.
A label set of four labels thus costs one prompt pass plus a few tokens, where scoring each label as its
own sequence cost four prompt passes (the job's medmcqa and classification cells spent most of their
CPU there, docs/pipeline.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from biorab.generation.base import continuation_text


@dataclass(frozen=True)
class ScoringRequest:
    """One prompt's token ids, its text (to choose the separator) and the labels to score."""

    prompt_ids: list[int]
    prompt_text: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class _PromptPass:
    """What one batch of prompts leaves for its labels: next-token log-probs, KV cache and mask."""

    first: torch.Tensor  # [rows, vocab] log P(next token | prompt)
    cache: Any  # the prompts' DynamicCache
    mask: torch.Tensor  # [rows, width] left-padded attention mask
    lengths: torch.Tensor  # [rows] prompt lengths (the next position of each row)


def score_labels(
    model: Any, tokenizer: Any, requests: Sequence[ScoringRequest], *, batch_size: int, pad_id: int
) -> list[dict[str, float]]:
    """Sum of token log-probabilities of each label as a continuation of its prompt.

    Returns one ``{label: logprob}`` per request, in order. The values are unnormalised (they do not sum
    to 1 over the labels): a metric that needs probabilities normalises them over the label set.
    `batch_size` bounds the prompts of one prompt pass and the label continuations of one cache pass.
    """
    conts = [
        [list(tokenizer(continuation_text(r.prompt_text, label), add_special_tokens=False)["input_ids"])
         for label in r.labels]
        for r in requests
    ]  # fmt: skip
    results: list[dict[str, float]] = [{} for _ in requests]
    order = sorted(range(len(requests)), key=lambda i: (-len(requests[i].prompt_ids), i))  # less padding
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        with torch.inference_mode():
            done = _prompt_pass(model, [requests[i].prompt_ids for i in rows], pad_id)
            pairs = [(b, k) for b, i in enumerate(rows) for k in range(len(requests[i].labels))]
            values = _pair_logprobs(model, done, [conts[rows[b]][k] for b, k in pairs], [b for b, _ in pairs],
                                    batch_size=batch_size, pad_id=pad_id)  # fmt: skip
        for (b, k), value in zip(pairs, values, strict=True):
            results[rows[b]][requests[rows[b]].labels[k]] = value
    return results


def _prompt_pass(model: Any, prompts: list[list[int]], pad_id: int) -> _PromptPass:
    """The prompts' left-padded cache and next-token log-probs, prefilled without padding
    (`biorab.generation.hf.prefill`)."""
    from biorab.generation.hf.prefill import prefill

    done = prefill(model, prompts, reserve=0, pad_id=pad_id, keep_logits=True)
    assert done.last_logits is not None  # keep_logits, and every prompt has tokens
    first = torch.log_softmax(done.last_logits.float(), dim=-1)
    lengths = torch.tensor([len(p) for p in prompts], dtype=torch.long)
    return _PromptPass(first, done.cache, done.mask, lengths)


def _pair_logprobs(
    model: Any, done: _PromptPass, conts: list[list[int]], rows: list[int], *, batch_size: int, pad_id: int
) -> list[float]:
    """Log-prob of each continuation `conts[j]` after the prompt of row `rows[j]` of `done`."""
    values = [float(done.first[row, cont[0]]) if cont else 0.0 for row, cont in zip(rows, conts, strict=True)]
    longer = [j for j, cont in enumerate(conts) if len(cont) > 1]  # tokens after the first need the cache
    for start in range(0, len(longer), batch_size):
        chunk = longer[start : start + batch_size]
        rest = _cached_continuations(model, done, [conts[j] for j in chunk], [rows[j] for j in chunk], pad_id)
        for j, value in zip(chunk, rest, strict=True):
            values[j] += value
    return values


def _cached_continuations(
    model: Any, done: _PromptPass, conts: list[list[int]], rows: list[int], pad_id: int
) -> list[float]:
    """Log-prob of tokens ``1:`` of each continuation, fed (right-padded, without its last token) after
    its row's cached prompt; the first token's log-prob is already in ``done.first``."""
    from transformers import DynamicCache

    index = torch.tensor(rows, dtype=torch.long)
    width = max(len(c) for c in conts) - 1
    ids = torch.full((len(conts), width), pad_id, dtype=torch.long)
    cont_mask = torch.zeros((len(conts), width), dtype=torch.long)
    for j, cont in enumerate(conts):
        ids[j, : len(cont) - 1] = torch.tensor(cont[:-1], dtype=torch.long)
        cont_mask[j, : len(cont) - 1] = 1
    mask = torch.cat([done.mask[index], cont_mask], dim=-1)
    positions = done.lengths[index].unsqueeze(-1) + torch.arange(width).unsqueeze(0)
    layers = [(layer.keys.index_select(0, index), layer.values.index_select(0, index))
              for layer in done.cache.layers]  # fmt: skip
    logits = _forward(model, ids, mask, positions, DynamicCache(ddp_cache_data=layers))
    logprobs = torch.log_softmax(logits.float(), dim=-1)  # position t predicts continuation token t + 1
    out = []
    for j, cont in enumerate(conts):
        targets = torch.tensor(cont[1:], dtype=torch.long, device=logprobs.device)
        out.append(float(logprobs[j, : len(cont) - 1, :].gather(-1, targets.unsqueeze(-1)).sum()))
    return out


def _forward(model: Any, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
             **kwargs: Any) -> torch.Tensor:
    """The model's logits for `ids` after what `cache` holds (the cache is extended in place)."""
    from biorab.generation.hf.cache import cache_kwarg

    device = next(model.parameters()).device
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                use_cache=True, **{cache_kwarg(model): cache}, **kwargs)
    logits: torch.Tensor = out.logits
    return logits
