"""Seeded batch order and the held-out split, both pure functions of (seed, step) so a resumed run
draws exactly the batches the killed one would have drawn."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def split_eval(items: Sequence[T], ids: Sequence[str], fraction: float, seed: int) -> tuple[list[T], list[T]]:
    """(train, eval) by a stable hash of each item's instance id, so an instance's triplets stay together.

    >>> split_eval(list("abcd"), ["1", "2", "3", "4"], 0.0, 0)
    (['a', 'b', 'c', 'd'], [])
    """
    train: list[T] = []
    held: list[T] = []
    for item, id_ in zip(items, ids, strict=True):
        h = int(hashlib.sha256(f"{seed}:{id_}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        (held if h < fraction else train).append(item)
    return train, held


def batch_indices(
    n: int, batch_size: int, step: int, seed: int, shard: tuple[int, int] = (0, 1)
) -> list[int]:
    """The indices of global batch `step` (epochs are seeded permutations), this worker's share of it.

    >>> batch_indices(4, 2, 0, 0) == batch_indices(4, 2, 0, 0)
    True
    """
    import torch

    start = step * batch_size
    out: list[int] = []
    while len(out) < batch_size:
        epoch, offset = divmod(start + len(out), n)
        generator = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
        order = torch.randperm(n, generator=generator).tolist()
        out.extend(order[offset : offset + batch_size - len(out)])
    rank, world = shard
    return out[rank::world]
