"""The attribution's parts on hand-made records: hit tags from a ledger, the answer flags of every task
kind, the twin and the flip, and the rates' denominators and intervals."""

from __future__ import annotations

import pytest

from biorab.attribution.answers import answer_flags
from biorab.attribution.evidence import Evidence
from biorab.attribution.rates import rates
from biorab.attribution.twin import find_twin, flip
from biorab.cells import CellPlan
from biorab.corpora.corpus import LedgerEntry
from biorab.experiment import RetrievalSpec
from biorab.records import Hit, Prediction

LEDGER = {
    "d/train/1": LedgerEntry("d/train/1", "1", "0", "other_class"),
    "d/train/2": LedgerEntry("d/train/2", "(A)", "(C)", "option"),
    "d/train/3": LedgerEntry("d/train/3", "aspirin|effect|rash", "aspirin|dosage|rash", "relation"),
    "d/train/4": LedgerEntry("d/train/4", "1", None, "value_removed"),
    "d/train/5": LedgerEntry("d/train/5", "1", "0", "other_class"),
}
EVIDENCE = Evidence("d", LEDGER, frozenset({"the query sentence."}))


def _hit(doc: str, value: str | None, *, key: str = "k", dataset: str = "d", rank: int = 0) -> Hit:
    return Hit(doc, 1.0, rank, key, value, dataset)


def test_hit_tags() -> None:
    corrupted, unlabeled, corrected, diverse = EVIDENCE.tags([
        _hit("d/train/3", "aspirin|dosage|rash", key="The  Query sentence."),
        _hit("d/train/4", None), _hit("d/train/5", "1"), _hit("x/train/9", "1", dataset="x")])
    assert (corrupted.pop("retrieved_rank"), corrupted.pop("plausibility")) == (1, None)  # issue 43's tags
    assert corrupted == {"doc_id": "d/train/3", "corrupted": True, "original_label": "aspirin|effect|rash",
                         "corrupted_label": "aspirin|dosage|rash", "how": "relation", "leaked": True,
                         "diverse": False, "source": "d", "unlabeled": False}
    assert unlabeled["unlabeled"] and not unlabeled["corrupted"] and unlabeled["original_label"] == "1"
    assert not corrected["corrupted"] and corrected["how"] is None  # a method put the original back
    assert diverse["diverse"] and diverse["source"] == "x" and not diverse["leaked"]
    assert EVIDENCE.tag(_hit("d/train/1", "0"))["how"] == "label"  # a class swapped is the whole label


def _flags(task: str, gold: str, answer: str | None, hits: list[Hit]):  # type: ignore[no-untyped-def]
    pred = Prediction(answer, answer or "", answer is not None)
    return answer_flags(task, gold, pred, hits, EVIDENCE.tags(hits))


def test_single_label_follows_copies_or_resists() -> None:
    hits = [_hit("d/train/1", "0"), _hit("d/train/9", "1", rank=1)]
    misled = _flags("classification", "1", "0", hits)
    assert (misled.has_corrupted, misled.followed_corruption, misled.copied_evidence,
            misled.copied_corrupted) == (True, True, True, True)
    right = _flags("classification", "1", "1", hits)
    assert (right.followed_corruption, right.copied_evidence, right.copied_corrupted) == (False, True, False)
    # the corrupted label is the gold: copying it is right, not misled
    lucky = _flags("classification", "0", "0", hits)
    assert not lucky.followed_corruption and lucky.copied_corrupted
    failed = _flags("qa", "(A)", None, [_hit("d/train/2", "(C)")])
    assert failed.has_corrupted and not failed.followed_corruption and not failed.copied_evidence
    assert failed.error_types is None and not failed.clean_evidence


def test_triples_follow_the_corrupted_triple_only() -> None:
    hits = [_hit("d/train/3", "aspirin|dosage|rash")]
    follows = _flags("triple_extraction", "aspirin|effect|rash", "Aspirin | dosage | rash\nx|effect|y", hits)
    assert follows.followed_corruption and not follows.copied_evidence  # an extra triple: no copy
    assert follows.error_types is not None and sum(follows.error_types.values()) > 0
    gold_too = _flags("triple_extraction", "aspirin|dosage|rash", "aspirin|dosage|rash", hits)
    assert not gold_too.followed_corruption and gold_too.copied_corrupted
    assert gold_too.error_types is not None and set(gold_too.error_types.values()) == {0}
    clean = _flags("triple_extraction", "a|effect|b", "a|effect|b", [_hit("d/train/7", "a|effect|b")])
    assert clean.clean_evidence and clean.copied_evidence and not clean.has_corrupted


def _plan(cell_id: str, testbed: str, *, dataset: str = "d", split: str = "test", seed: int | None = None,
          parser: str = "robust") -> CellPlan:
    retrieval = RetrievalSpec(testbed=testbed, rate=0.8 if testbed == "counterfactual" else None)
    return CellPlan(cell_id, cell_id, "classification", 0, parser, None, dataset=dataset, split=split,
                    retrieval=retrieval, sampling_seed=seed)


def test_twin_is_the_same_slice_without_retrieval() -> None:
    cell = _plan("cf", "counterfactual")
    plans = [cell, _plan("b-none", "none", parser="strict_original"), _plan("a-none", "none", seed=3),
             _plan("c-none", "none"), _plan("other", "none", dataset="e"), _plan("dev", "none", split="dev")]
    twin = find_twin(cell, plans)
    assert twin is not None and twin.cell_id == "c-none"  # same parser first
    assert find_twin(_plan("a-none", "none"), plans) is None  # a cell without retrieval has no twin
    seeded = find_twin(_plan("cf3", "counterfactual", seed=3), plans)
    assert seeded is not None and seeded.cell_id == "a-none"
    assert find_twin(_plan("cf", "counterfactual", dataset="z"), plans) is None
    assert [flip(a, b) for a, b in ((False, True), (True, False), (False, False))] == \
        ["helped", "hurt", "unchanged"]


def test_rates_denominators_and_intervals() -> None:
    out = rates({"misled": ([True, False, True, True], [True, True, True, False]),
                 "empty": ([False] * 4, [False] * 4)}, n_boot=200, seed=0)
    assert out["misled"].value == pytest.approx(2 / 3)  # the 4th instance is outside the denominator
    assert out["misled"].ci_low is not None and out["misled"].ci_low <= 2 / 3 <= out["misled"].ci_high
    assert out["empty"].value is None and out["empty"].ci_low is None
