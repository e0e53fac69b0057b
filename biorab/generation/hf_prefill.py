"""Prefill without padding: prompts run at their own lengths, then join one left-padded cache.

A batch left-padded to its longest prompt spends its prefill on padding when lengths differ: the smoke
job's triple batch has 3,626 prompt tokens padded to 9,104 (one BM25 prompt of 569 among 15 of 154-284),
and the padded prefill took 2.8x the CPU of the same prompts run alone (docs/pipeline.md). Here prompts
of similar length run together (a group's padding stays within `PADDING_TOLERANCE` of its tokens), each
group with its own cache, and every row's keys and values are copied into one left-padded
`ReservedCache` at the offset left padding would have put them. Decoding then runs the whole batch as
before, so the per-step cost of the weights is still shared by all rows.

The cache holds what a left-padded prefill holds (same positions, same mask); the values differ only in
float rounding, because each group's matmuls have other shapes. A row's prefill no longer depends on
which other prompts share its batch, only on its group.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from biorab.generation.hf_cache import ReservedCache, cache_kwarg

PADDING_TOLERANCE = 0.1  # a group's padded tokens may exceed its real tokens by this share


@dataclass(frozen=True)
class Prefilled:
    """A left-padded batch prefill: the cache, its mask, and each row's next-token logits."""

    cache: ReservedCache  # width positions per layer, `reserve` more spare
    mask: torch.Tensor  # [rows, width] 1 where a row has a token
    last_logits: torch.Tensor | None  # [rows, vocab] (None when not kept or a row was empty)


def length_groups(lengths: Sequence[int], *, max_rows: int, tolerance: float = PADDING_TOLERANCE) -> list[list[int]]:
    """Row indices in groups of similar length, longest first: a group takes the next row while its
    padded size (rows x longest) stays within ``1 + tolerance`` of its real tokens. Empty rows are left out."""
    order = sorted((i for i, n in enumerate(lengths) if n > 0), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    for i in order:
        group = groups[-1] if groups else None
        if group is not None and len(group) < max_rows:
            longest, real = lengths[group[0]], sum(lengths[j] for j in group) + lengths[i]
            if longest * (len(group) + 1) <= (1 + tolerance) * real:
                group.append(i)
                continue
        groups.append([i])
    return groups


def prefill(
    model: Any, seqs: Sequence[Sequence[int]], *, reserve: int, pad_id: int, keep_logits: bool = False
) -> Prefilled:
    """Run `seqs` through `model` in length groups and join their caches left-padded to the longest.

    `reserve` spare positions per layer are allocated for the tokens that follow (see `ReservedCache`).
    With `keep_logits`, each row's logits at its last position are returned (every row must be non-empty).
    """
    width = max(len(s) for s in seqs)
    device = next(model.parameters()).device
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        mask[row, width - len(seq) :] = 1
    buffers: list[tuple[torch.Tensor, torch.Tensor]] = []
    last: torch.Tensor | None = None
    for group in length_groups([len(s) for s in seqs], max_rows=len(seqs)):
        layers, logits = _group_pass(model, [seqs[i] for i in group], pad_id, device)
        if not buffers:
            buffers = [(_empty_like(k, len(seqs), width + reserve), _empty_like(v, len(seqs), width + reserve))
                       for k, v in layers]  # fmt: skip
        for r, i in enumerate(group):
            n = len(seqs[i])
            for (k_buf, v_buf), (k, v) in zip(buffers, layers, strict=True):
                k_buf[i, :, width - n : width, :].copy_(k[r, :, k.shape[-2] - n :, :])
                v_buf[i, :, width - n : width, :].copy_(v[r, :, v.shape[-2] - n :, :])
        if keep_logits:
            if last is None:
                last = logits.new_empty((len(seqs), logits.shape[-1]))
            last[group] = logits
    return Prefilled(ReservedCache.filled(buffers, width), mask, last)


def _group_pass(
    model: Any, seqs: list[Sequence[int]], pad_id: int, device: torch.device
) -> tuple[list[tuple[torch.Tensor, torch.Tensor]], torch.Tensor]:
    """One left-padded forward pass over a group: per-layer (keys, values) and the last position's logits."""
    from transformers import DynamicCache

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, width - len(seq) :] = torch.tensor(list(seq), dtype=torch.long)
        mask[row, width - len(seq) :] = 1
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    cache = DynamicCache(config=model.config)
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                use_cache=True, logits_to_keep=1, **{cache_kwarg(model): cache})  # fmt: skip
    layers = [(layer.keys, layer.values) for layer in cache.layers]
    return layers, out.logits[:, -1, :]


def _empty_like(states: torch.Tensor, rows: int, positions: int) -> torch.Tensor:
    """Zeros, not `empty`: padding positions are masked, but a NaN there would still reach softmax."""
    return states.new_zeros((rows, states.shape[1], positions, states.shape[-1]))
