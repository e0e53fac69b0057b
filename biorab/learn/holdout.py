"""The seeded hash split of corpus items into train and held-out, made before any triplet is built.

The awareness encoder is scored on how well it flags corrupted corpus items; scored on items it was trained
on, the number says nothing about items it has not seen. An item's side is decided by a hash of its
normalized text (`biorab.corpora.text_identity.normalized_text`) and the split's seed, so every copy of a
sentence lands on the same side, the split needs no state, and a different seed gives a different split.
Triplets are drawn from the train side only (anchors, positives, negatives); evaluation retrieves from the
held-out side only.

`biorab.datasets.holdout` splits a dataset's examples by a seeded draw over row indices; the corpus split
here follows the text instead, so that no copy of a held-out sentence can reach training.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic import Field

from biorab.common.params import Params
from biorab.common.records import Example
from biorab.corpora.corpus import Corpus, Ledger
from biorab.corpora.text_identity import normalized_text

if TYPE_CHECKING:
    from biorab.learn.config import TrainingSource
    from biorab.ral.parts.retriever import CachedRetriever


class CorpusHoldOut(Params):
    """Which share of the corpus items is held out from training, and the seed of the hash.

    Attributes:
        fraction: the expected share of held-out items (0 holds none out: the old, not held-out setup).
        seed: enters the hash; another seed, another split.
    """

    fraction: float = Field(default=0.3, ge=0.0, lt=1.0)
    seed: int = 0

    def held_out(self, text: str) -> bool:
        """Whether the item (or instance) of this text is on the held-out side.

        >>> CorpusHoldOut(fraction=0.5).held_out("Aspirin caused rash.")
        True
        >>> CorpusHoldOut(fraction=0.0).held_out("x")
        False
        """
        digest = hashlib.sha256(f"holdout/v1\0{self.seed}\0{normalized_text(text)}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64 < self.fraction


def split_corpus(corpus: Corpus, ledger: Ledger, hold_out: CorpusHoldOut) -> tuple[Corpus, Corpus, Ledger]:
    """(the train side, the held-out side) of `corpus`, each in corpus order, and `ledger` (ids are shared,
    so one ledger serves both)."""
    train = [item for item in corpus.items if not hold_out.held_out(item.key)]
    held = [item for item in corpus.items if hold_out.held_out(item.key)]
    return replace(corpus, items=train), replace(corpus, items=held), ledger


def index_part(source: TrainingSource, part: Corpus) -> CachedRetriever:
    """The RAL core's retriever over one side of the source's testbed corpus (`index_corpus`, through the
    assembly with `part` kept: a side's digest keys its index and hits), fetching `SELF_MARGIN` extra
    candidates per query as the training builders do."""
    from biorab.learn.instruction_set import index_corpus

    def side(corpus: Corpus, _ledger: Ledger) -> Corpus:
        kept = {item.id for item in part.items}
        return replace(corpus, items=[item for item in corpus.items if item.id in kept])

    return index_corpus(source, part, part=side)


def train_side(examples: Sequence[Example], hold_out: CorpusHoldOut) -> list[Example]:
    """The instances whose text is on the train side (anchors of training triplets)."""
    return [ex for ex in examples if not hold_out.held_out(ex.text)]


def unseen(examples: Sequence[Example], train: Corpus) -> list[Example]:
    """The evaluation instances whose text is no train-side item's (an anchor seen in training, e.g. a test
    sentence that is also a training sentence, would not be held out)."""
    seen = {normalized_text(item.key) for item in train.items}
    return [ex for ex in examples if normalized_text(ex.text) not in seen]
