"""The canonical corpus bytes (the digest every hits key holds): the written-out encoder equals the
generic `json.dumps` line, the line memo changes nothing, and the digests of every testbed corpus of the
fixture data are pinned (computed before the encoder and the counterfactual draws were made faster)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from biorab.common.records import CorpusItem
from biorab.corpora import build_corpus, canonical_jsonl, corpus_digest
from biorab.corpora.corpus import LineMemo, beir_row, canonical_line

TRICKY = [
    CorpusItem(
        id="a/train/0", key='quotes " and \\ backslash', value="y", dataset="semclass", task="classification"
    ),
    CorpusItem(
        id="a/train/1", key="tab\tnew\nline \x00\x1f \u2028 é ü 中文 🧬", value=None, dataset="d", task="qa"
    ),
    CorpusItem(
        id="a/train/2", key="", value="head|rel|tail\nh2|r2|t2", dataset="ade", task="triple_extraction"
    ),
    CorpusItem(id="a/train/3", key="lone \ud800 surrogate", value="\\u0041", dataset="d", task="t"),
]


def _generic(items: list[CorpusItem]) -> str:
    return "".join(canonical_line(beir_row(item)) for item in items)


def test_written_out_lines_equal_json_dumps() -> None:
    text_items = TRICKY[:3]  # a lone surrogate cannot be UTF-8 encoded by either path
    assert canonical_jsonl(text_items) == _generic(text_items).encode("utf-8")
    with pytest.raises(UnicodeEncodeError):
        canonical_jsonl(TRICKY[3:])


def test_a_field_that_is_not_a_string_takes_the_generic_path() -> None:
    odd = CorpusItem(id="x/train/0", key="k", value=3, dataset="d", task="t")  # type: ignore[arg-type]
    assert canonical_jsonl([odd]) == _generic([odd]).encode("utf-8")
    assert b'"value":3' in canonical_jsonl([odd])


def test_line_memo_gives_the_same_bytes_and_encodes_each_item_once() -> None:
    lines: LineMemo = {}
    items = TRICKY[:3]
    first = canonical_jsonl(items, lines)
    assert first == canonical_jsonl(items) and len(lines) == 3
    again = canonical_jsonl([items[1], items[0]], lines)
    assert again == canonical_jsonl([items[1], items[0]]) and len(lines) == 3


# dataset -> digest[:16] of: labeled, unlabeled, diverse, negative_awareness, counterfactual 20%, 100%
# (seed 0, fixture data), computed with the generic encoder and the original counterfactual draws;
# negative_awareness is counterfactual 100% under another name, so their digests (and hits) are shared
PINNED = {
    "ade": (
        "52754d5308b67b7f",
        "bc8ffbc044501ffe",
        "436f2c60860211c9",
        "f7841ddf063d8f94",
        "c00cdb349db541a2",
        "f7841ddf063d8f94",
    ),
    "chemprot": (
        "c606d90fa8e31c06",
        "0aefe235e7549cae",
        "12905c52bb63230e",
        "92c18b72ba7fbe46",
        "6fb7e1c84e8e44d1",
        "92c18b72ba7fbe46",
    ),
    "git": (
        "f94c38bfc4379e61",
        "ac16978010a8d36e",
        "63f54d53b89cd782",
        "07d65a311e7ad2f3",
        "ee995ee8dfa862e8",
        "07d65a311e7ad2f3",
    ),
    "pharmkg": (
        "777e502a1d977ea2",
        "8ca00216c1f267b3",
        "6b9ca64bdf84fe88",
        "56667c3084638d23",
        "0150154bde87bc2e",
        "56667c3084638d23",
    ),
    "hetionet": (
        "a3a301e9a79af81b",
        "9c8dd80a8681cd7c",
        "f249f8872a488219",
        "ab337ba1cef35644",
        "df7e752f1defcda1",
        "ab337ba1cef35644",
    ),
    "ade_corpus_v2": (
        "bea1c46541cfee3b",
        "e1722143dbfc8f98",
        "66ca3be45fa92891",
        "5ffb1f7fed5a5af8",
        "95a46fe9cb054e34",
        "5ffb1f7fed5a5af8",
    ),
    "semclass": (
        "7825d45749b10fdc",
        "0b44241b2d14cd65",
        "03bca4f63097c8ab",
        "b4be6410f5b2a54f",
        "d30b26d4a5b51806",
        "b4be6410f5b2a54f",
    ),
    "medmcqa": (
        "bbc2e5359c71b2cb",
        "e79eb0eedbb28dc9",
        "631ecb00c517b692",
        "d076832ac21c421e",
        "d711e608cb9d3659",
        "d076832ac21c421e",
    ),
}
SPECS = [
    ("labeled", None),
    ("unlabeled", None),
    ("diverse", None),
    ("negative_awareness", None),
    ("counterfactual", 0.2),
    ("counterfactual", 1.0),
]


@pytest.mark.parametrize("dataset", sorted(PINNED))
def test_testbed_digests_are_pinned(dataset: str, data_dir: Path) -> None:
    lines: LineMemo = {}
    got = []
    for kind, rate in SPECS:
        corpus, _ledger = build_corpus(kind, dataset, rate=rate, seed=0, data_dir=data_dir)
        generic = hashlib.sha256(_generic(corpus.items).encode("utf-8")).hexdigest()
        assert corpus.digest == generic == corpus_digest(corpus.items, lines)
        got.append(corpus.digest[:16])
    assert tuple(got) == PINNED[dataset]
