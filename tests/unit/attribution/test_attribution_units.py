"""The attribution's parts on hand-made records: hit tags from a ledger, the answer flags of every task
kind, the twin and the flip, and the rates' denominators and intervals."""

from __future__ import annotations

import pytest

from biorab.attribution.answers import answer_flags
from biorab.attribution.evidence import Evidence, cell_evidence
from biorab.attribution.rates import rates
from biorab.attribution.twin import find_twin, first_covering, flip, label_margin, prior_bin
from biorab.common.records import Hit, Prediction
from biorab.corpora.corpus import LedgerEntry
from biorab.experiment import RetrievalSpec
from biorab.ral.specs.cell_records import CellPlan

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
                         "corrupted_label": "aspirin|dosage|rash", "how": "relation", "method": None,
                         "leaked": True,
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


TRAIN = {("d", "d/train/1"): "1", ("d", "d/train/3"): "aspirin|effect|rash", ("d", "d/train/6"): "0",
         ("d", "d/train/7"): "a|effect|b", ("x", "x/train/9"): "1"}


def test_a_corpus_methods_wrong_label_is_corrupted_whether_or_not_the_ledger_lists_it() -> None:
    from biorab.attribution.answers import label_items
    from biorab.tasks import get_task

    kind = get_task("triple_extraction")
    evidence = Evidence("d", LEDGER, frozenset(), train_label=lambda d, i: TRAIN.get((d, i)),
                        method="llm_label", same=lambda a, b: label_items(kind, a) == label_items(kind, b))
    relabelled, ledgered, moved, reformatted, other = evidence.tags([
        _hit("d/train/6", "1"),                     # not in the ledger: the method made it wrong
        _hit("d/train/1", "0"),                     # the ledger's corruption, kept by the method
        _hit("d/train/3", "aspirin|effect|itch"),   # ledgered, but the method changed it to a third label
        _hit("d/train/7", "A | effect |  b"),       # the training triple written differently: not wrong
        _hit("x/train/9", "0", dataset="x")])       # another dataset's item, judged by its own label
    assert (relabelled["corrupted"], relabelled["how"], relabelled["method"]) == (True, "method", "llm_label")
    assert relabelled["original_label"] == "0" and relabelled["corrupted_label"] == "1"
    assert (ledgered["how"], ledgered["method"]) == ("label", None)
    assert (moved["how"], moved["method"], moved["original_label"]) == ("method", "llm_label",
                                                                        "aspirin|effect|rash")
    assert not reformatted["corrupted"] and reformatted["how"] is None
    assert other["corrupted"] and other["original_label"] == "1"
    # And it counts as misleading: the answer that follows it is misled.
    flags = answer_flags("classification", "0", Prediction("1", "1", True), [_hit("d/train/6", "1")],
                         [relabelled])
    assert flags.misleading_evidence and flags.followed_corruption
    unexplained = Evidence("d", {}, frozenset(), train_label=lambda d, i: TRAIN.get((d, i)))
    assert unexplained.tag(_hit("d/train/6", "1"))["how"] == "unexplained"


def test_misleading_hits_and_the_first_ones_rank() -> None:
    # gold 0: hit 1 is clean, hit 2's corruption (1 → 0) agrees with the gold, hit 3 (1 → 0 ... gold 1) not
    hits = [_hit("d/train/9", "0"), _hit("d/train/1", "0", rank=1), _hit("d/train/2", "(C)", rank=2)]
    flags = _flags("qa", "0", "(C)", hits)
    assert flags.misleading == (False, False, True) and flags.first_misleading_rank == 3
    assert flags.misleading_evidence and flags.followed_corruption and flags.copied_misleading
    agrees = _flags("classification", "0", "0", hits[:2])
    assert agrees.has_corrupted and not agrees.misleading_evidence and agrees.first_misleading_rank is None
    # A triple corruption whose changed triple is in the gold cannot mislead, even beside other triples.
    gold = "aspirin|dosage|rash\nx|effect|y"
    inside = _flags("triple_extraction", gold, None, [_hit("d/train/3", "aspirin|dosage|rash")])
    assert inside.has_corrupted and not inside.misleading_evidence


def test_the_twins_prior_margin_and_bins() -> None:
    assert label_margin({"a": -0.2, "b": -1.5, "c": -4.0}) == pytest.approx(1.3)
    assert label_margin({"a": -0.2}) is None and label_margin(None) is None
    assert [prior_bin(m, True) for m in (0.0, 0.999, 1.0, 2.99, 3.0, 40.0)] == \
        ["margin_lt_1"] * 2 + ["margin_1_to_3"] * 2 + ["margin_ge_3"] * 2
    assert (prior_bin(None, True), prior_bin(None, False)) == ("twin_right", "twin_wrong")


def test_twin_matches_the_slice_and_covers_the_cells_ids() -> None:
    def plan(cell_id: str, testbed: str, slice_key: str) -> CellPlan:
        return CellPlan(cell_id, cell_id, "classification", 0, "robust", None, dataset="d", split="test",
                        retrieval=RetrievalSpec(testbed=testbed), slice_key=slice_key)

    one_to_five = plan("cf-1to5", "labeled", "1:5")
    twins = [plan("none-1to1", "none", "1:1"), plan("none-1to5", "none", "1:5")]
    assert [p.cell_id for p in twins if find_twin(one_to_five, [p]) is not None] == ["none-1to5"]
    ids = {"none-small": {"a"}, "none-big": {"a", "b", "c"}}
    pool = [plan("none-small", "none", "1:5"), plan("none-big", "none", "1:5")]
    found = first_covering(one_to_five, {"a", "b"}, pool, lambda p: p, lambda p: ids[p.cell_id])
    assert found is not None and found.cell_id == "none-big"  # the first by id holds too few instances
    assert first_covering(one_to_five, {"z"}, pool, lambda p: p, lambda p: ids[p.cell_id]) is None


def test_an_excess_is_the_paired_difference_with_a_paired_interval() -> None:
    cell = [True, True, False, True, False, True]
    twin = [True, False, False, False, False, True]
    within = [True, True, True, True, True, False]
    out = rates({"excess": (cell, twin, within), "cell": (cell, within), "twin": (twin, within)},
                n_boot=300, seed=0)
    assert out["excess"].value == pytest.approx((3 - 1) / 5)  # by hand: 3 and 1 of the 5 in the denominator
    assert out["excess"].value == pytest.approx(out["cell"].value - out["twin"].value)
    assert out["excess"].ci_low is not None and out["excess"].ci_low >= 0.0  # never negative per pair
    same = rates({"excess": (cell, cell, within)}, n_boot=300, seed=0)["excess"]
    assert (same.value, same.ci_low, same.ci_high) == (0.0, 0.0, 0.0)


def test_holm_matches_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    from biorab.metrics.paired import holm_or_none

    raw = [0.01, 0.2, None, 0.003, 0.04, 0.5]
    present = [p for p in raw if p is not None]
    expected = iter(multipletests(present, method="holm")[1])
    got = holm_or_none(raw)
    assert got[2] is None
    assert [g for g in got if g is not None] == pytest.approx(list(expected))


def test_cell_evidence_reads_training_labels_of_every_source(data_dir) -> None:  # type: ignore[no-untyped-def]
    from biorab.datasets import load_dataset

    plan = CellPlan("c", "c", "classification", 0, "robust", None, dataset="ade_corpus_v2", split="test",
                    retrieval=RetrievalSpec(testbed="labeled", retriever="bm25"), data_dir=str(data_dir))
    evidence = cell_evidence(plan)
    train = load_dataset("ade_corpus_v2", "train", data_dir=data_dir)[0]
    assert evidence.train_label("ade_corpus_v2", train.id) == train.label
    assert not evidence.tag(_hit(train.id, train.label, dataset="ade_corpus_v2"))["corrupted"]
