"""Evidence orders on hand-made hits (expected lists written out by hand), the order-sensitive fake, the
retrieval entry's validation and the order twin / flip rules (docs/retrieval.md § Evidence order)."""

from __future__ import annotations

import hashlib
import random

import pytest
from pydantic import ValidationError

from biorab.attribution.order import order_flips, order_twin
from biorab.common.records import Example, Hit
from biorab.corpora.corpus import LedgerEntry
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.ral.specs.cell_records import CellPlan
from biorab.ral.specs.evidence_order import HitOrder, misleading_ids, order_hits, target_position
from biorab.ral.specs.retrieval_spec import RetrievalSpec
from biorab.tasks import get_template, render

# Five hits as retrieved (rank 0 best); items b and d were relabelled by the ledger ("x" is their wrong
# label), item c was relabelled but the hit carries the original (a method put it back): not misleading.
HITS = [Hit(doc, 1.0 - i / 10, i, f"key {doc}", value) for i, (doc, value) in
        enumerate([("a", "p"), ("b", "x"), ("c", "p"), ("d", "x"), ("e", "p")])]
LEDGER = [LedgerEntry("b", "p", "x", "other_class"), LedgerEntry("c", "p", "x", "other_class"),
          LedgerEntry("d", "p", "x", "other_class"), LedgerEntry("z", "p", None, "value_removed")]
WRONG = misleading_ids(LEDGER)


def _ids(hits: list[Hit]) -> list[str]:
    return [h.doc_id for h in hits]


def test_misleading_ids_are_the_ledgers_wrong_labels() -> None:
    assert WRONG == {"b": "x", "c": "x", "d": "x"}  # the removed value is no wrong label


@pytest.mark.parametrize(("order", "expected"), [
    ("retrieved", ["a", "b", "c", "d", "e"]),
    ("reverse", ["e", "d", "c", "b", "a"]),
    # b (rank 1) is the best-ranked misleading hit; c carries its original label, so it is not misleading
    ("misleading_first", ["b", "a", "c", "d", "e"]),
    ("misleading_middle", ["a", "c", "b", "d", "e"]),  # position 3 of 5
    ("misleading_last", ["a", "c", "d", "e", "b"]),
])
def test_orders_on_hand_made_hits(order: str, expected: list[str]) -> None:
    got = order_hits(HITS, order, wrong=WRONG)
    assert _ids(got) == expected
    assert sorted(got, key=lambda h: h.rank) == HITS  # the same hits, ranks kept: the permutation is recorded


def test_no_misleading_hit_keeps_the_retrieved_order() -> None:
    assert _ids(order_hits(HITS, "misleading_last", wrong={})) == ["a", "b", "c", "d", "e"]
    assert _ids(order_hits(HITS[:1], "reverse")) == ["a"]


def test_middle_positions() -> None:
    # 1-based middle (n + 1) // 2: 1 of 1, 1 of 2, 2 of 3, 2 of 4, 3 of 5
    assert [target_position("misleading_middle", n) + 1 for n in range(1, 6)] == [1, 1, 2, 2, 3]
    assert target_position("misleading_last", 4) == 3 and target_position("misleading_first", 4) == 0


def test_shuffle_is_seeded_per_query() -> None:
    got = order_hits(HITS, "shuffle", seed=7, query="q1")
    # a second computation: the generator seeded by the first 8 bytes of sha256("7\x1fq1")
    rng = random.Random(int.from_bytes(hashlib.sha256(b"7\x1fq1").digest()[:8], "big"))
    want = list(HITS)
    rng.shuffle(want)
    assert got == want
    assert order_hits(HITS, "shuffle", seed=7, query="q1") == got  # same seed and query: same order
    others = {tuple(_ids(order_hits(HITS, "shuffle", seed=s, query="q1"))) for s in range(8)}
    assert len(others) > 1  # the seed matters
    assert HitOrder("shuffle", {}, 7).apply("q1", HITS) == got


def test_entry_validation_and_fingerprint() -> None:
    plain = RetrievalSpec(testbed="counterfactual", rate=0.5)
    ordered = RetrievalSpec(testbed="counterfactual", rate=0.5, order="reverse")
    assert "order" not in plain.fingerprint_json() and "order" not in plain.entry_json()
    assert ordered.fingerprint_json()["order"] == "reverse" and ordered.entry_json()["order"] == "reverse"
    with pytest.raises(ValidationError, match="counterfactual or negative_awareness"):
        RetrievalSpec(testbed="labeled", order="misleading_first")
    with pytest.raises(ValidationError, match="needs retrieved hits"):
        RetrievalSpec(testbed="none", order="reverse")
    RetrievalSpec(testbed="labeled", order="reverse")  # any retrieving testbed can be reversed


def test_copy_last_fake_answers_the_last_shown_label() -> None:
    template = get_template("ade_corpus_v2")
    example = Example(id="t/1", text="Aspirin caused a rash.", label="1", dataset="ade_corpus_v2",
                      split="test", task="classification")
    hits = [Hit("a", 1.0, 0, "first example", "0"), Hit("b", 0.5, 1, "second example", "1")]
    prompt = render(template, example, hits)
    answer = {mode: FakeBackend(FakeBackend.Params(mode=mode)).generate([prompt], SamplingParams())[0].text
              for mode in ("copy_top", "copy_last")}
    assert answer == {"copy_top": "0", "copy_last": "1"}
    flipped = render(template, example, hits[::-1])
    last = FakeBackend(FakeBackend.Params(mode="copy_last"))
    assert last.generate([flipped], SamplingParams())[0].text == "0"


def _plan(cell_id: str, order: str, *, rate: float = 0.5, parser: str = "robust") -> CellPlan:
    spec = RetrievalSpec(testbed="counterfactual", rate=rate, order=order)  # type: ignore[arg-type]
    return CellPlan(cell_id=cell_id, label=cell_id, task="classification", seed=0, parser=parser,
                    labels=None, dataset="d", split="test", retrieval=spec)


def test_order_twin_is_the_retrieved_cell_of_the_same_setting() -> None:
    base, rev = _plan("b", "retrieved"), _plan("r", "reverse")
    other_rate, other_parser = _plan("o", "retrieved", rate=0.2), _plan("p", "retrieved", parser="x")
    plans = [other_rate, other_parser, rev, base]
    assert order_twin(rev, plans) == base
    assert order_twin(base, plans) is None  # the retrieved order has no order twin
    assert order_twin(rev, [other_rate, other_parser, rev]) is None


def test_order_flips_by_answer_items() -> None:
    def row(i: str, label: str | None, ok: bool = True) -> dict[str, object]:
        return {"id": i, "pred_label": label, "pred_ok": ok}

    own = [row("1", "1"), row("2", "0"), row("3", None, False), row("4", None, False), row("5", "1")]
    twin = [row("1", "1"), row("2", "1"), row("3", "1"), row("4", None, False)]  # 5 has no twin row
    # by hand: 1 same, 2 differs, 3 failure vs answer (a flip), 4 two failures (not), 5 unpaired
    assert order_flips("classification", own, twin) == {"1": False, "2": True, "3": True, "4": False}
