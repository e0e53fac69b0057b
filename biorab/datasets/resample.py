"""Seeded resampling of a binary classification split to a positive:negative ratio (the paper's
sampling-bias study, §2.7: 1:1 vs 1:5).

The paper does not say how many instances it drew; we keep the largest slice with exactly the ratio:
``m = min(P // p, N // n)`` blocks of p positives and n negatives (capped by `limit` when given), drawn
without replacement with ``random.Random(seed)`` and returned in split order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from biorab.common.errors import ConfigError
from biorab.common.labels import LABELS
from biorab.common.records import Example

#: The positive class of each binary classification dataset (the label that means "yes").
POSITIVE_LABELS: dict[str, str] = {"ade_corpus_v2": "1", "semclass": "y"}


def positive_label(dataset: str, positive: str | None = None) -> str:
    """The positive label: `positive` when given, else the dataset's (`POSITIVE_LABELS`)."""
    if positive is not None:
        return positive
    if dataset not in POSITIVE_LABELS:
        raise ConfigError(f"resample needs a binary classification dataset ({', '.join(POSITIVE_LABELS)}) "
                          f"or an explicit resample.positive; got {dataset!r}", key="resample.positive")
    return POSITIVE_LABELS[dataset]


def resample(
    examples: Sequence[Example], ratio: tuple[int, int], *, seed: int, positive: str,
    limit: int | None = None,
) -> list[Example]:
    """The seeded ``ratio`` (positives, negatives) subset of `examples`, in their order.

    Args:
        examples: the split; every label other than `positive` is a negative.
        ratio: (p, n), e.g. (1, 5).
        seed: seeds the draw.
        positive: the positive label.
        limit: at most this many instances (the ratio is kept exactly, so possibly fewer), but at least
            one block of p + n: a limit below it (``--limit 2`` of a 1:5 slice) draws one block.
    """
    labels = LABELS.get(examples[0].dataset) if examples else None
    if labels is not None and positive not in labels:
        raise ConfigError(f"positive label {positive!r} is not in {list(labels)}", key="resample.positive")
    p, n = ratio
    pos = [i for i, ex in enumerate(examples) if ex.label == positive]
    neg = [i for i, ex in enumerate(examples) if ex.label != positive]
    blocks = min(len(pos) // p, len(neg) // n)
    if blocks == 0:
        raise ConfigError(f"cannot draw {p}:{n} from {len(pos)} positives and {len(neg)} negatives",
                          key="resample.ratio")
    if limit is not None:  # at least one block: a smoke run's --limit 2 still draws the ratio (1:5 -> 6)
        blocks = min(blocks, max(1, limit // (p + n)))
    rng = random.Random(seed)
    chosen = set(rng.sample(pos, blocks * p)) | set(rng.sample(neg, blocks * n))
    return [examples[i] for i in sorted(chosen)]
