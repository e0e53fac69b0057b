"""Near / far counterfactual lies (docs/retrieval.md § Plausibility of the counterfactual): confusability on
hand-made training sets with the similarities worked out by hand, the ledger's record of the choice, and
the testbeds on the fixture data (the same items corrupted as the counterfactual testbed, same seed → the
same ledger byte for byte)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.common.records import Example
from biorab.corpora import build_corpus, read_corpus, write_corpus
from biorab.corpora.corpus import LedgerEntry
from biorab.corpora.plausibility import Confusability, bag, cosine, plausible_wrong_label
from biorab.tasks.task_types import LabelSpace


def _ex(i: int, text: str, label: str, task: str = "classification", **fields: object) -> Example:
    return Example(id=f"d/train/{i}", text=text, label=label, dataset="d", split="train", task=task,
                   fields=dict(fields))


# Three classes. Bags: a = {drug: 2, rash: 1}, b = {drug: 1, rash: 1}, c = {tumor: 1}.
# By hand: cos(a, b) = (2 + 1) / (sqrt(5) * sqrt(2)) = 3 / sqrt(10) ≈ 0.949; cos(a, c) = 0.
TRAIN = [_ex(0, "Drug rash", "a"), _ex(1, "drug", "a"), _ex(2, "drug RASH", "b"), _ex(3, "tumor", "c")]
SPACE = LabelSpace(task="classification", labels=("a", "b", "c"))


def test_cosine_by_hand() -> None:
    assert bag("Drug, drug rash") == {"drug": 2, "rash": 1}
    assert cosine(bag("drug drug rash"), bag("drug rash")) == pytest.approx(3 / math.sqrt(10))
    assert cosine(bag("drug"), bag("")) == 0.0


def test_near_and_far_classes() -> None:
    conf = Confusability.of(TRAIN)
    rng = random.Random(0)
    assert plausible_wrong_label(TRAIN[0], SPACE, conf, "near", rng) == ("b", "other_class",
                                                                         pytest.approx(3 / math.sqrt(10)))
    assert plausible_wrong_label(TRAIN[0], SPACE, conf, "far", rng) == ("c", "other_class", 0.0)
    # c is equally far from a and b (similarity 0 to both): near and far tie, drawn with the seeded rng
    draws = {plausible_wrong_label(TRAIN[3], SPACE, conf, "near", random.Random(s))[0] for s in range(16)}
    assert draws == {"a", "b"}
    again = [plausible_wrong_label(TRAIN[3], SPACE, conf, "near", random.Random(5))[0] for _ in range(3)]
    assert len(set(again)) == 1  # same seed, same draw


def test_binary_near_equals_far() -> None:
    train = [_ex(0, "x", "1"), _ex(1, "y", "0")]
    conf = Confusability.of(train)
    space = LabelSpace(task="classification", labels=("1", "0"))
    assert plausible_wrong_label(train[0], space, conf, "near", random.Random(0))[0] == "0"
    assert plausible_wrong_label(train[0], space, conf, "far", random.Random(0))[0] == "0"


def test_qa_options_by_text() -> None:
    # gold (B) "iron deficiency anemia"; (A) "folate deficiency anemia" shares 2 of 3 words → cos 2/3;
    # (C) "anemia" → 1/sqrt(3) ≈ 0.577; (D) "hypertension" → 0
    options = {"A": "folate deficiency anemia", "B": "iron deficiency anemia", "C": "anemia",
               "D": "hypertension"}
    item = _ex(0, "q", "(B)", task="qa", options=options)
    conf = Confusability.of([item])
    space = LabelSpace(task="qa", labels=("(A)", "(B)", "(C)", "(D)"))
    assert plausible_wrong_label(item, space, conf, "near", random.Random(0)) == ("(A)", "option",
                                                                                  pytest.approx(2 / 3))
    assert plausible_wrong_label(item, space, conf, "far", random.Random(0)) == ("(D)", "option", 0.0)
    with pytest.raises(DataError, match="option texts"):
        plausible_wrong_label(_ex(1, "q", "(A)", task="qa"), space, conf, "near", random.Random(0))


def test_triple_tails_by_relation_counts() -> None:
    t = "triple_extraction"
    train = [_ex(0, "s0", "aspirin|effect|rash", t), _ex(1, "s1", "ibuprofen|effect|rash", t),
             _ex(2, "s2", "ibuprofen|effect|Nausea", t), _ex(3, "s3", "aspirin|dosage|100 mg", t)]
    conf = Confusability.of(train)
    space = LabelSpace(task=t, relations=("effect", "dosage"), tails=("100 mg", "Nausea", "rash"))
    # item 1's gold tail is rash; for relation effect: nausea 1 (near), 100 mg 0 (far)
    assert plausible_wrong_label(train[1], space, conf, "near", random.Random(0)) == (
        "ibuprofen|effect|Nausea", "tail", 1.0)
    assert plausible_wrong_label(train[1], space, conf, "far", random.Random(0)) == (
        "ibuprofen|effect|100 mg", "tail", 0.0)


def test_ledger_records_the_choice_and_old_ledgers_are_unchanged() -> None:
    plain = LedgerEntry("i", "a", "b", "other_class")
    assert plain.to_row() == {"item_id": "i", "original": "a", "corrupted": "b", "how": "other_class"}
    near = LedgerEntry("i", "a", "b", "other_class", "near", 0.5)
    assert near.to_row()["plausibility"] == "near" and near.to_row()["confusability"] == 0.5


@pytest.mark.parametrize("dataset", ["hetionet", "medmcqa", "ade", "ade_corpus_v2"])
def test_fixture_testbeds(dataset: str, data_dir: Path, tmp_path: Path) -> None:
    random_cf = build_corpus("counterfactual", dataset, rate=0.5, seed=0, data_dir=data_dir)[1]
    near, far = (build_corpus(k, dataset, rate=0.5, seed=0, data_dir=data_dir)
                 for k in ("counterfactual_near", "counterfactual_far"))
    # the same items are corrupted at the same rate and seed; only the lies differ
    ids = [e.item_id for e in random_cf.entries]
    assert [e.item_id for e in near[1].entries] == ids == [e.item_id for e in far[1].entries]
    assert {e.plausibility for e in near[1].entries} == {"near"}
    assert {e.plausibility for e in far[1].entries} == {"far"}
    # near lies are at least as confusable as far ones, item by item
    assert all(n.confusability >= f.confusability  # type: ignore[operator]
               for n, f in zip(near[1].entries, far[1].entries, strict=True))
    assert all(e.corrupted != e.original for e in (*near[1].entries, *far[1].entries))
    # same seed → the same ledger, byte for byte; written and read back with the choice
    again = build_corpus("counterfactual_near", dataset, rate=0.5, seed=0, data_dir=data_dir)[1]
    assert again.to_jsonl() == near[1].to_jsonl()
    back = read_corpus(write_corpus(*near, tmp_path / "near"))[1]
    assert back.entries == near[1].entries


def test_multi_class_near_and_far_differ_on_fixture(data_dir: Path) -> None:
    near, far = (build_corpus(k, "hetionet", rate=0.5, seed=0, data_dir=data_dir)[1]
                 for k in ("counterfactual_near", "counterfactual_far"))
    assert sum(n.corrupted != f.corrupted for n, f in zip(near.entries, far.entries, strict=True)) > 0
