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

Prompts of one template share their instruction (132 of the 154-569 tokens of the smoke job's ADE
prompts, 69-78 in its classification and QA cells): such a shared prefix runs once, and the rows' own
tokens run on its cache, the prefix caching vLLM does across requests, here within a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from biorab.generation.hf.cache import ReservedCache, cache_kwarg

PADDING_TOLERANCE = 0.1  # a group's padded tokens may exceed its real tokens by this share
MIN_SHARED_PREFIX = 16  # shorter shared prefixes are not worth a pass of their own


@dataclass(frozen=True)
class Prefilled:
    """A left-padded batch prefill: the cache, its mask, and each row's next-token logits."""

    cache: ReservedCache  # width positions per layer, `reserve` more spare
    mask: torch.Tensor  # [rows, width] 1 where a row has a token
    last_logits: torch.Tensor | None  # [rows, vocab] (None when not kept or a row was empty)


def length_groups(
    lengths: Sequence[int], *, max_rows: int, tolerance: float = PADDING_TOLERANCE
) -> list[list[int]]:
    """Row indices in groups of similar length, longest first: a group takes the next row while its
    padded size (rows x longest) stays within ``1 + tolerance`` of its real tokens. Empty rows are left
    out."""
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


def prefix_families(
    seqs: Sequence[Sequence[int]], *, min_prefix: int = MIN_SHARED_PREFIX
) -> list[tuple[int, list[int]]]:
    """Rows that share a leading run of at least `min_prefix` tokens, as ``(shared length, rows)``.

    The rows are sorted by their tokens, so the common prefix of any run of them is the smallest common
    prefix of neighbours; a run is split where that is smallest whenever its parts save more prefill
    tokens (``(rows - 1) x shared``) than the whole (two templates of one task share their first
    sentence, each template's rows share its whole instruction). Every row keeps at least one token of
    its own, whose logits a scoring pass reads. Rows in no family are left out; so are empty rows."""
    order = sorted((i for i, s in enumerate(seqs) if s), key=lambda i: (tuple(seqs[i]), i))
    adjacent = [_common_length(seqs[a], seqs[b]) for a, b in zip(order, order[1:], strict=False)]

    def best(lo: int, hi: int) -> tuple[int, list[tuple[int, list[int]]]]:
        if hi - lo < 2:
            return 0, []
        between = adjacent[lo : hi - 1]
        shared = min(min(between), min(len(seqs[i]) for i in order[lo:hi]) - 1)
        whole = (hi - lo - 1) * shared if shared >= min_prefix else 0
        cut = lo + 1 + between.index(min(between))
        (left, left_families), (right, right_families) = best(lo, cut), best(cut, hi)
        if left + right > whole:
            return left + right, left_families + right_families
        return whole, [(shared, order[lo:hi])] if whole else []

    return best(0, len(order))[1]


def prefill(
    model: Any, seqs: Sequence[Sequence[int]], *, reserve: int, pad_id: int, keep_logits: bool = False
) -> Prefilled:
    """Run `seqs` through `model` and join their caches left-padded to the longest: a prefix shared by a
    family of rows (`prefix_families`) runs once, then the rows' own tokens in length groups on its cache;
    the other rows run in length groups (`length_groups`).

    `reserve` spare positions per layer are allocated for the tokens that follow (see `ReservedCache`).
    With `keep_logits`, each row's logits at its last position are returned (every row must be non-empty).
    """
    width = max(len(s) for s in seqs)
    device = next(model.parameters()).device
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        mask[row, width - len(seq) :] = 1
    passes: list[tuple[int, list[int], list[tuple[torch.Tensor, torch.Tensor]] | None]] = []
    families = prefix_families(seqs)
    for shared, rows in families:
        prefix_states, _ = _group_pass(model, [seqs[rows[0]][:shared]], pad_id, device)
        own = [len(s) - shared if i in rows else 0 for i, s in enumerate(seqs)]
        passes += [(shared, group, prefix_states) for group in length_groups(own, max_rows=len(seqs))]
    alone = {i for _, rows in families for i in rows}
    lengths = [0 if i in alone else len(s) for i, s in enumerate(seqs)]
    passes += [(0, group, None) for group in length_groups(lengths, max_rows=len(seqs))]
    buffers: list[tuple[torch.Tensor, torch.Tensor]] = []
    last: torch.Tensor | None = None
    for shared, group, prefix in passes:
        layers, logits = _group_pass(model, [seqs[i][shared:] for i in group], pad_id, device, prefix)
        if not buffers:
            size = width + reserve
            buffers = [(_empty_like(k, len(seqs), size), _empty_like(v, len(seqs), size)) for k, v in layers]
        for r, i in enumerate(group):
            _place(buffers, layers, r, i, shared=shared, own=len(seqs[i]) - shared, width=width)
        if keep_logits:
            if last is None:
                last = logits.new_empty((len(seqs), logits.shape[-1]))
            last[group] = logits
    return Prefilled(ReservedCache.filled(buffers, width), mask, last)


def _place(
    buffers: list[tuple[torch.Tensor, torch.Tensor]],
    layers: list[tuple[torch.Tensor, torch.Tensor]],
    r: int,
    i: int,
    *,
    shared: int,
    own: int,
    width: int,
) -> None:
    """Copy row `r` of a pass (its shared prefix first, then its own tokens at the end of the pass's
    width) into row `i` of the joined buffers, ending at `width` as left padding would."""
    for pair, sources in zip(buffers, layers, strict=True):
        for buffer, source in zip(pair, sources, strict=True):
            if shared:
                buffer[i, :, width - own - shared : width - own, :].copy_(source[r, :, :shared, :])
            buffer[i, :, width - own : width, :].copy_(source[r, :, source.shape[-2] - own :, :])


def _group_pass(
    model: Any,
    seqs: list[Sequence[int]],
    pad_id: int,
    device: torch.device,
    prefix: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
) -> tuple[list[tuple[torch.Tensor, torch.Tensor]], torch.Tensor]:
    """One left-padded forward pass over a group, after a one-row `prefix` cache when given: per-layer
    (keys, values), the prefix's positions first, and the last position's logits."""
    from transformers import DynamicCache

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, seq in enumerate(seqs):
        ids[row, width - len(seq) :] = torch.tensor(list(seq), dtype=torch.long)
        mask[row, width - len(seq) :] = 1
    shared = 0 if prefix is None else prefix[0][0].shape[-2]
    positions = shared + (mask.cumsum(-1) - 1).clamp(min=0)
    if prefix is None:
        cache = DynamicCache(config=model.config)
    else:  # the padding sits between the prefix and a row's own tokens: the mask hides it
        rows = len(seqs)
        cache = DynamicCache(ddp_cache_data=[(k.expand(rows, -1, -1, -1), v.expand(rows, -1, -1, -1))
                                             for k, v in prefix])  # fmt: skip
        mask = torch.cat([torch.ones((rows, shared), dtype=torch.long), mask], dim=-1)
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=positions.to(device),
                use_cache=True, logits_to_keep=1, **{cache_kwarg(model): cache})  # fmt: skip
    layers = [(cast(torch.Tensor, layer.keys), cast(torch.Tensor, layer.values))  # type: ignore[union-attr]
              for layer in cache.layers]  # fmt: skip
    logits: torch.Tensor = out.logits[:, -1, :]
    return layers, logits


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _empty_like(states: torch.Tensor, rows: int, positions: int) -> torch.Tensor:
    """Zeros, not `empty`: padding positions are masked, but a NaN there would still reach softmax."""
    return states.new_zeros((rows, states.shape[1], positions, states.shape[-1]))
