"""Testbed corpora: exact counterfactual counts, wrong labels from the label space, complete ledgers,
byte-identical rebuilds, and the diverse/unlabeled shapes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from biorab.common.errors import ConfigError, DataError, UnknownNameError
from biorab.common.labels import ADE_RELATIONS, HETIONET_LABELS
from biorab.common.records import Example
from biorab.corpora import build_corpus, canonical_jsonl, corrupted_count


def _classification(n: int, dataset: str = "ade_corpus_v2") -> list[Example]:
    return [
        Example(
            id=f"{dataset}/train/{i}",
            task="classification",
            dataset=dataset,
            split="train",
            text=f"sentence number {i}",
            label="1" if i % 3 == 0 else "0",
        )
        for i in range(n)
    ]


def _loader(tables: dict[str, list[Example]]):  # noqa: ANN202 - a tiny fake loader
    def load(name: str) -> Sequence[Example]:
        return tables[name]

    return load


@pytest.mark.parametrize(
    ("rate", "n", "expected"),
    [
        (0.2, 4000, 800),
        (0.8, 4000, 3200),
        (1.0, 7, 7),
        (0.5, 5, 3),
        (0.0, 10, 0),
        (1 / 3, 10, 3),
        (0.29, 100, 29),
    ],
)
def test_corrupted_count_rounds_half_up(rate: float, n: int, expected: int) -> None:
    assert corrupted_count(rate, n) == expected


def test_counterfactual_20_percent_of_4000_is_800_all_changed_and_ledgered() -> None:
    examples = _classification(4000)
    corpus, ledger = build_corpus(
        "counterfactual", "ade_corpus_v2", rate=0.2, seed=3, loader=_loader({"ade_corpus_v2": examples})
    )
    gold = {e.id: e.label for e in examples}
    changed = {item.id for item in corpus.items if item.value != gold[item.id]}
    assert len(changed) == 800
    assert len(ledger) == 800
    assert {entry.item_id for entry in ledger.entries} == changed
    for entry in ledger.entries:
        assert entry.original == gold[entry.item_id]
        assert entry.corrupted == {"1": "0", "0": "1"}[entry.original]  # binary: the other class
        assert entry.how == "other_class"
    assert [item.id for item in corpus.items] == [e.id for e in examples]  # order and keys untouched
    assert [item.key for item in corpus.items] == [e.text for e in examples]


def test_same_seed_gives_identical_bytes_and_other_seed_differs() -> None:
    load = _loader({"ade_corpus_v2": _classification(500)})
    first, ledger_a = build_corpus("counterfactual", "ade_corpus_v2", rate=0.8, seed=7, loader=load)
    again, ledger_b = build_corpus("counterfactual", "ade_corpus_v2", rate=0.8, seed=7, loader=load)
    other, _ = build_corpus("counterfactual", "ade_corpus_v2", rate=0.8, seed=8, loader=load)
    assert canonical_jsonl(first.items) == canonical_jsonl(again.items)
    assert ledger_a.to_jsonl() == ledger_b.to_jsonl()
    assert first.digest == again.digest != other.digest


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_triple_corruption_changes_relation_or_tail_to_a_wrong_one(data_dir) -> None:  # noqa: ANN001
    corpus, ledger = build_corpus("counterfactual", "ade", rate=1.0, seed=0, data_dir=data_dir)
    assert len(corpus.items) == 4970 and len(ledger) == 4970
    tails = {_first(entry.original)[2] for entry in ledger.entries}  # rate 1.0: every training triple
    counts = ledger.counts()
    assert set(counts) == {"relation", "tail"} and sum(counts.values()) == 4970
    assert min(counts.values()) > 2000  # a fair coin between the two kinds
    for entry in ledger.entries:
        (h0, r0, t0), (h1, r1, t1) = (_first(entry.original), _first(entry.corrupted))
        assert h1 == h0
        assert (r0.lower(), " ".join(t0.lower().split())) != (r1.lower(), " ".join(t1.lower().split()))
        if entry.how == "relation":
            assert t1 == t0 and r1 in ADE_RELATIONS and r1 != r0
        else:
            assert r1 == r0 and t1 in tails


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_link_prediction_qa_and_semclass_wrong_labels(data_dir) -> None:  # noqa: ANN001
    _, ledger = build_corpus("counterfactual", "hetionet", rate=0.2, seed=1, data_dir=data_dir)
    assert len(ledger) == 800
    assert all(
        e.corrupted in HETIONET_LABELS and e.corrupted != e.original and e.how == "label"
        for e in ledger.entries
    )
    _, ledger = build_corpus("negative_awareness", "medmcqa", seed=1, data_dir=data_dir)
    assert len(ledger) == 4000
    assert all(
        e.corrupted in {"(A)", "(B)", "(C)", "(D)"} and e.corrupted != e.original for e in ledger.entries
    )
    _, ledger = build_corpus("counterfactual", "semclass", rate=0.8, seed=1, data_dir=data_dir)
    assert len(ledger) == 1920  # 0.8 * 2400
    assert all({e.original, e.corrupted} == {"y", "n"} for e in ledger.entries)


def test_unlabeled_drops_every_value_and_records_it() -> None:
    examples = _classification(10)
    corpus, ledger = build_corpus("unlabeled", "ade_corpus_v2", loader=_loader({"ade_corpus_v2": examples}))
    assert all(item.value is None for item in corpus.items)
    assert [(e.item_id, e.original, e.corrupted, e.how) for e in ledger.entries] == [
        (x.id, x.label, None, "value_removed") for x in examples
    ]


def test_labeled_is_the_training_set() -> None:
    examples = _classification(4)
    corpus, ledger = build_corpus("labeled", "ade_corpus_v2", loader=_loader({"ade_corpus_v2": examples}))
    assert [(i.id, i.key, i.value, i.dataset, i.task) for i in corpus.items] == [
        (e.id, e.text, e.label, "ade_corpus_v2", "classification") for e in examples
    ]
    assert len(ledger) == 0


def test_diverse_excludes_the_target_and_keeps_pool_order() -> None:
    tables = {name: _classification(2, name) for name in ("a", "b", "c")}
    corpus, ledger = build_corpus("diverse", "b", pool=["a", "b", "c"], loader=_loader(tables))
    assert [item.id for item in corpus.items] == ["a/train/0", "a/train/1", "c/train/0", "c/train/1"]
    assert corpus.sources == ("a", "c") and len(ledger) == 0


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_diverse_on_staged_data_has_the_other_seven_training_sets(data_dir) -> None:  # noqa: ANN001
    corpus, _ = build_corpus("diverse", "ade", data_dir=data_dir)
    # chemprot 4111 + git 3734 + pharmkg 4000 + hetionet 4000
    # + ade_corpus_v2 4000 + semclass 2400 + medmcqa 4000
    assert len(corpus.items) == 26245
    assert not any(item.dataset == "ade" for item in corpus.items)
    assert corpus.counts()["from:semclass"] == 2400


@pytest.mark.parametrize(
    ("kind", "rate", "error"),
    [
        ("counterfactual", None, ConfigError),
        ("counterfactual", 1.5, ConfigError),
        ("counterfactual", -0.1, ConfigError),
        ("labeled", 0.2, ConfigError),
        ("negative_awareness", 0.5, ConfigError),
        ("noisy", None, UnknownNameError),
    ],
)
def test_bad_specs_are_clear_errors(kind: str, rate: float | None, error: type[Exception]) -> None:
    message = "unknown testbed 'noisy'. Known testbeds:" if kind == "noisy" else "rate"
    with pytest.raises(error, match=message):
        build_corpus(kind, "ade_corpus_v2", rate=rate, loader=_loader({"ade_corpus_v2": _classification(5)}))


def test_empty_training_set_and_label_outside_the_space_are_data_errors() -> None:
    with pytest.raises(DataError, match="no training items"):
        build_corpus("labeled", "x", loader=_loader({"x": []}))
    bad = [
        Example(
            "ade_corpus_v2/train/0", "classification", "ade_corpus_v2", "train", "s", "maybe", source_line=1
        )
    ]
    with pytest.raises(DataError, match="not in the label set"):
        build_corpus("counterfactual", "ade_corpus_v2", rate=1.0, loader=_loader({"ade_corpus_v2": bad}))


def test_malformed_triple_label_names_the_item() -> None:
    bad = [Example("ade/train/0", "triple_extraction", "ade", "train", "s", "only|two", source_line=4)]
    with pytest.raises(DataError, match="ade/train/0") as info:
        build_corpus("counterfactual", "ade", rate=1.0, loader=_loader({"ade": bad}))
    assert info.value.line == 4 and info.value.field == "label"


def _first(label: str) -> tuple[str, str, str]:
    head, relation, tail = label.split("\n")[0].split("|")
    return head, relation, tail


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_real_triple_corpus_rebuilds_byte_identically(data_dir) -> None:  # noqa: ANN001
    first, ledger = build_corpus("counterfactual", "ade", rate=0.2, seed=0, data_dir=data_dir)
    again, ledger_again = build_corpus("counterfactual", "ade", rate=0.2, seed=0, data_dir=data_dir)
    assert len(ledger) == 994  # round(0.2 * 4970)
    assert canonical_jsonl(first.items) == canonical_jsonl(again.items)
    assert ledger.to_jsonl() == ledger_again.to_jsonl()
    other, _ = build_corpus("counterfactual", "ade", rate=0.2, seed=1, data_dir=data_dir)
    assert other.digest != first.digest


def test_nli_gets_the_other_class() -> None:
    examples = [
        Example(f"bionli/train/{i}", "nli", "bionli", "train", f"premise {i} hypothesis {i}", label)
        for i, label in enumerate(["entailment", "contradiction"] * 5)
    ]
    corpus, ledger = build_corpus(
        "counterfactual", "bionli", rate=0.4, seed=0, loader=_loader({"bionli": examples})
    )
    assert len(ledger) == 4
    flipped = {"entailment": "contradiction", "contradiction": "entailment"}
    assert all(e.corrupted == flipped[e.original] and e.how == "other_class" for e in ledger.entries)
    assert sum(item.value != example.label for item, example in zip(corpus.items, examples, strict=True)) == 4
