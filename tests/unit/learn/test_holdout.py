"""The encoder's held-out evaluation: corpus items split by a seeded hash before triplets are built; no
held-out item in any training triplet; evaluation scores held-out items only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from biorab.corpora.text_identity import normalized_text
from biorab.learn import TrainingSource, build_triplets
from biorab.learn.encoder_eval import curve_scores
from biorab.learn.holdout import CorpusHoldOut, index_part, split_corpus, unseen
from biorab.learn.instruction_set import build_testbed, load_examples, retrieve_without_self


def source(data_dir: Path, **kw: object) -> TrainingSource:
    base = {"dataset": "ade_corpus_v2", "limit": 40, "k": 2, "testbed": "counterfactual", "rate": 0.5,
            "data_dir": str(data_dir)}
    return TrainingSource.model_validate({**base, **kw})


def test_the_split_is_seeded_by_text_and_near_its_fraction(data_dir: Path) -> None:
    corpus, ledger = build_testbed(source(data_dir))
    train, held, _ = split_corpus(corpus, ledger, CorpusHoldOut(fraction=0.3, seed=0))
    assert len(train.items) + len(held.items) == len(corpus.items) == 40
    again = split_corpus(corpus, ledger, CorpusHoldOut(fraction=0.3, seed=0))[1]
    assert [i.id for i in again.items] == [i.id for i in held.items]  # deterministic
    other = split_corpus(corpus, ledger, CorpusHoldOut(fraction=0.3, seed=1))[1]
    assert [i.id for i in other.items] != [i.id for i in held.items]  # another seed, another split
    assert 6 <= len(held.items) <= 18
    # a copy of a sentence (case, spacing) lands on the same side as the sentence
    rule = CorpusHoldOut(fraction=0.5, seed=3)
    assert all(rule.held_out(t) == rule.held_out(f"  {t.upper()} ") for t in (i.key for i in corpus.items))


@pytest.mark.parametrize("negatives", ["both", "random", "corrupted"])
def test_no_held_out_item_is_in_any_training_triplet(data_dir: Path, negatives: str) -> None:
    rule = CorpusHoldOut(fraction=0.3, seed=0)
    built = build_triplets(source(data_dir), negatives=negatives, hold_out=rule)
    assert built.held_out is not None and built.held_out.items and built.triplets
    held_keys = {normalized_text(item.key) for item in built.held_out.items}
    for t in built.triplets:
        assert normalized_text(t.anchor) not in held_keys
        for text in (t.positive, t.negative):  # "The label of (<key>) is (<value>)"
            assert not any(key in normalized_text(text) for key in held_keys), text
    assert {normalized_text(i.key) for i in built.corpus.items}.isdisjoint(held_keys)
    # without the hold-out the same source draws on every item
    full = build_triplets(source(data_dir), negatives=negatives)
    assert len(full.corpus.items) == len(built.corpus.items) + len(built.held_out.items)


def test_evaluation_retrieves_held_out_items_for_unseen_instances_only(data_dir: Path) -> None:
    rule = CorpusHoldOut(fraction=0.3, seed=0)
    src = source(data_dir, split="test", limit=20)
    corpus, ledger = build_testbed(src)
    train, held, _ = split_corpus(corpus, ledger, rule)
    examples = unseen(load_examples(src), train)
    retriever = index_part(src, held)
    assert retriever.corpus_digest == held.digest  # the held-out side, indexed by the RAL's builder
    hits = retrieve_without_self(retriever, examples, src.k)
    held_ids = {item.id for item in held.items}
    assert examples and all(h.doc_id in held_ids for found in hits.values() for h in found)


def test_auroc_and_auprc_carry_bootstrap_intervals() -> None:
    rng = np.random.default_rng(0)
    flags = rng.random(200) < 0.5
    scores = flags + rng.normal(0, 1.0, 200)
    result = curve_scores(scores, flags, n_boot=200, seed=0)
    low, high = result.auroc_ci
    assert low is not None and high is not None and low < result.auroc < high
    assert result.auprc_ci[0] is not None and result.auprc_ci[0] < result.auprc < result.auprc_ci[1]
    assert set(result.to_metrics("trained")) == {
        "auroc_trained", "auroc_trained_ci_low", "auroc_trained_ci_high",
        "auprc_trained", "auprc_trained_ci_low", "auprc_trained_ci_high"}
