"""Query framings on hand-made texts (docs/datasets.md § Query framing): the abbreviation table, seeded
typos, the leading sentence, the query fields they reach, and the fixture slices' ledgers (same seed →
same bytes)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from biorab.common.records import Example
from biorab.datasets import load_dataset
from biorab.datasets.framing import (
    FRAMINGS,
    LEADING,
    abbreviate,
    add_typos,
    instance_rng,
    ledger_bytes,
    reframe,
)
from biorab.experiment import Framing


def test_abbreviations_by_hand() -> None:
    text, changes = abbreviate("History of congestive heart failure and hypertension, treated without IV.")
    assert text == "hx of CHF and HTN, treated w/o IV."
    assert changes == (("History", "hx"), ("congestive heart failure", "CHF"), ("hypertension", "HTN"),
                       ("without", "w/o"))
    assert abbreviate("withdrawal") == ("withdrawal", ())  # whole words only


def test_typos_touch_a_tenth_of_the_long_words() -> None:
    text = " ".join(f"word{c}" for c in "abcdefghijklmnopqrst").replace("word", "ward")  # 20 words of 5
    new, changes = add_typos(text, instance_rng(3, "x"))
    assert len(changes) == 2  # max(1, round(0.1 * 20))
    for start, word, edit, typo in changes:
        assert text[start:start + len(word)] == word
        assert {"swap": len(typo) == len(word) and sorted(typo) == sorted(word),
                "drop": len(typo) == len(word) - 1, "double": len(typo) == len(word) + 1}[edit]
    assert add_typos(text, instance_rng(3, "x")) == (new, changes)  # same seed and id: same typos
    assert {add_typos(text, instance_rng(s, "x"))[0] for s in range(6)} != {new}
    assert add_typos("a an the", instance_rng(0, "x")) == ("a an the", ())  # no word of four letters


def test_leading_and_query_fields(data_dir: Path) -> None:
    train = load_dataset("medmcqa", "train", data_dir=data_dir)
    tests = load_dataset("medmcqa", "test", data_dir=data_dir)[:6]
    out, ledger = reframe(tests, "leading", seed=0, train=train)
    for before, after, entry in zip(tests, out, ledger, strict=True):
        (wrong,) = entry.changes
        assert wrong != before.label and wrong in {f"({k})" for k in before.fields["options"]}
        sentence = LEADING.format(wrong=wrong)
        assert after.text == f"{before.text} {sentence}"
        assert after.fields["question"] == f"{before.fields['question']} {sentence}"  # what the prompt shows
        assert after.fields["options"] == before.fields["options"] and after.label == before.label


@pytest.mark.parametrize("framing", ["abbreviations", "typos", "leading"])
def test_same_seed_same_ledger(framing: str, data_dir: Path) -> None:
    train = load_dataset("ade_corpus_v2", "train", data_dir=data_dir)
    tests = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:12]
    first = ledger_bytes(reframe(tests, framing, seed=0, train=train)[1])
    assert first == ledger_bytes(reframe(tests, framing, seed=0, train=train)[1])
    assert len(first.splitlines()) == 12
    if framing == "typos":
        assert first != ledger_bytes(reframe(tests, framing, seed=1, train=train)[1])


def test_config_literal_is_the_framings() -> None:
    assert get_args(Framing) == FRAMINGS


def test_none_is_identity() -> None:
    ex = Example(id="i", text="t", label="1", dataset="d", split="test", task="classification")
    assert reframe([ex], "none", seed=0) == ([ex], [])
