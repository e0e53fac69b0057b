"""Seeded held-out splits for components that need data the source does not set aside.

Where a source has no dev split, BioRAB invents none (the training split stays the paper's retrieval
corpus). A component that needs held-out data (tuning, early stopping) splits it itself with
`hold_out` and stores the returned `HoldOut.record` next to its results, so the split can be checked
and reproduced: which examples, how many, which seed, and a digest of the held-out ids.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from biorab.common.errors import ConfigError
from biorab.common.records import Example


@dataclass(frozen=True)
class HoldOut:
    """The two parts of a split, each in source order, and the record that describes it.

    Attributes:
        kept: the examples left for fitting.
        held_out: the held-out examples.
        record: JSON-ready description: ``source`` (the ``dataset/split`` prefixes of the ids), ``method``,
            ``seed``, ``fraction`` (``None`` when a size was given), ``n_total``, ``n_held_out`` and
            ``held_out_ids_sha256`` (of the newline-joined held-out ids, in source order).
    """

    kept: list[Example]
    held_out: list[Example]
    record: dict[str, Any]


def hold_out(
    examples: Sequence[Example], *, fraction: float | None = None, size: int | None = None, seed: int = 0
) -> HoldOut:
    """Hold out `size` examples (or ``round(fraction * n)``), drawn with ``random.Random(seed).sample``.

    Args:
        examples: the examples to split (e.g. a dataset's train split).
        fraction: share to hold out, in (0, 1); give it or `size`, not both.
        size: number of examples to hold out, 1 <= size < len(examples).
        seed: seed of the draw; the same inputs and seed always give the same split.

    Raises:
        ConfigError: neither or both of `fraction` and `size`, or a value that leaves either part empty.

    >>> from biorab.common.records import Example
    >>> rows = [Example(f"d/train/{i}", "qa", "d", "train", f"q{i}", "(A)") for i in range(5)]
    >>> split = hold_out(rows, size=2, seed=0)
    >>> [e.id for e in split.held_out], len(split.kept)
    (['d/train/3', 'd/train/4'], 3)
    """
    n = len(examples)
    count = _count(n, fraction, size)
    chosen = set(random.Random(seed).sample(range(n), count))
    held = [e for i, e in enumerate(examples) if i in chosen]
    kept = [e for i, e in enumerate(examples) if i not in chosen]
    digest = hashlib.sha256("\n".join(e.id for e in held).encode("utf-8")).hexdigest()
    record = {
        "source": sorted({e.id.rsplit("/", 1)[0] for e in examples}),
        "method": "random.Random(seed).sample over row indices",
        "seed": seed,
        "fraction": fraction,
        "n_total": n,
        "n_held_out": len(held),
        "held_out_ids_sha256": digest,
    }
    return HoldOut(kept=kept, held_out=held, record=record)


def _count(n: int, fraction: float | None, size: int | None) -> int:
    if (fraction is None) == (size is None):
        raise ConfigError("give exactly one of 'fraction' and 'size'", key="fraction")
    if fraction is not None:
        if not 0.0 < fraction < 1.0:
            raise ConfigError(f"must be between 0 and 1 (exclusive), got {fraction}", key="fraction")
        size = round(fraction * n)
    assert size is not None
    if not 1 <= size < n:
        raise ConfigError(
            f"holding out {size} of {n} examples would leave a part empty; need 1 <= size < {n}", key="size"
        )
    return size
