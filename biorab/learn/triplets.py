"""Awareness triplets (the paper's §4.3.3): anchor x, a positive instance that helps answer x, a negative
one that does not.

- positives: x itself, written as a corpus item with its gold value (the paper: "x itself serves as the
  most informative positive instance"), and x's retrieved items the ledger leaves clean;
- negatives: random corpus items that are neither x nor a positive (the paper's sampling), and/or the
  items the counterfactual ledger marks as corrupted: x's own item when its value was corrupted, x's
  corrupted retrieved items, else any corrupted item.

Items are written as the awareness probe describes a retrieved example (`biorab.tasks.describe_hit`), so
the encoder judges the same (key, value) text the RAL shows the model.

With a `CorpusHoldOut` (`biorab.learn.holdout`), the corpus is split by a seeded hash first and every part of
every triplet (anchor, positive, negative, the retrieval behind them) comes from the train side; the
held-out side is kept for evaluation (`biorab.learn.encoder_eval.slice_auroc`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from biorab.common.errors import ConfigError
from biorab.common.records import CorpusItem, Example, Hit
from biorab.corpora.corpus import Corpus, Ledger
from biorab.learn.config import TrainingSource
from biorab.learn.holdout import CorpusHoldOut, index_part, split_corpus, train_side
from biorab.learn.instruction_set import build_testbed, index_corpus, load_examples, retrieve_without_self
from biorab.learn.records import Triplet


@dataclass(frozen=True)
class TripletSet:
    """Triplets, the corpus (its train side under a hold-out) and ledger they were drawn from, and the
    held-out side (``None`` without a hold-out)."""

    source: TrainingSource
    triplets: tuple[Triplet, ...]
    corpus: Corpus
    ledger: Ledger
    held_out: Corpus | None = None


def item_text(task: str, key: str, value: str | None) -> str:
    """A corpus item as the awareness probe writes a retrieved example.

    >>> item_text("classification", "Aspirin caused rash.", "1")
    'The label of (Aspirin caused rash.) is (1)'
    """
    from biorab.tasks import describe_hit

    return describe_hit(task, Hit(doc_id="", score=0.0, rank=0, key=key, value=value))


def build_triplets(source: TrainingSource, *, negatives: str = "both", per_anchor: int = 2,
                   hold_out: CorpusHoldOut | None = None) -> TripletSet:
    """Triplets for the instances of `source` over its testbed corpus (see the module docstring).

    Args:
        source: the instances and the testbed (``counterfactual`` for ledger negatives).
        negatives: ``random``, ``corrupted`` or ``both`` (alternating).
        per_anchor: triplets per anchor (positives and negatives are cycled).
        hold_out: split the corpus first and draw everything from its train side.
    """
    if source.testbed == "none":
        raise ConfigError(
            "triplets need a corpus; set training.testbed (e.g. counterfactual)", key="training.testbed"
        )
    examples = load_examples(source)
    corpus, ledger = build_testbed(source)
    held = None
    if hold_out is not None:
        corpus, held, ledger = split_corpus(corpus, ledger, hold_out)
        examples = train_side(examples, hold_out)
    if negatives != "random" and not ledger.entries:
        raise ConfigError(
            f"negatives {negatives!r} need corrupted items, but the {source.testbed} testbed has "
            "an empty ledger; use testbed counterfactual with a rate > 0, or negatives: random",
            key="negatives",
        )
    retriever = index_corpus(source, corpus) if held is None else index_part(source, corpus)
    hits = retrieve_without_self(retriever, examples, source.k)
    rng = random.Random(source.seed)
    drawer = _NegativeDrawer(corpus, ledger, rng)
    triplets = [
        t for ex in examples for t in _anchor_triplets(ex, hits[ex.id], drawer, negatives, per_anchor)
    ]
    return TripletSet(source, tuple(triplets), corpus, ledger, held)


class _NegativeDrawer:
    """Seeded draws of random and corrupted corpus items."""

    def __init__(self, corpus: Corpus, ledger: Ledger, rng: random.Random) -> None:
        self.items = corpus.items
        self.by_id = {item.id: item for item in corpus.items}
        # Only the corpus's own corrupted items (under a hold-out, the ledger also lists held-out ones).
        self.corrupted = {i: e for i, e in ledger.by_id().items() if i in self.by_id}
        self.corrupted_ids = sorted(self.corrupted)
        self.rng = rng

    def random_item(self, avoid: set[str]) -> CorpusItem:
        for _ in range(64):
            item = self.rng.choice(self.items)
            if item.id not in avoid:
                return item
        return next(item for item in self.items if item.id not in avoid)

    def corrupted_item(self, example: Example, hits: Sequence[Hit]) -> CorpusItem:
        own = [example.id] if example.id in self.corrupted else []
        near = [h.doc_id for h in hits if h.doc_id in self.corrupted]
        pool = own + near
        return self.by_id[pool[0] if pool else self.rng.choice(self.corrupted_ids)]


def _anchor_triplets(
    example: Example, hits: Sequence[Hit], drawer: _NegativeDrawer, negatives: str, per_anchor: int
) -> list[Triplet]:
    task = example.task
    positives = [item_text(task, example.text, example.label)]
    positives += [item_text(task, h.key, h.value) for h in hits if h.doc_id not in drawer.corrupted]
    avoid = {example.id, *(h.doc_id for h in hits)}
    out = []
    for i in range(per_anchor):
        kind = negatives if negatives != "both" else ("corrupted" if i % 2 == 0 else "random")
        item = drawer.corrupted_item(example, hits) if kind == "corrupted" else drawer.random_item(avoid)
        out.append(
            Triplet(
                example.id,
                example.text,
                positives[i % len(positives)],
                item_text(task, item.key, item.value),
                kind,
            )
        )
    return out
