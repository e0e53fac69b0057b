"""BM25: pinned hit ids and scores on a tiny corpus (checked against the Lucene formula by hand), ties,
de-duplication, persistence and bad input."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, RetrievalError, UnknownNameError
from biorab.common.records import CorpusItem
from biorab.retrieval import build_retriever

DOCS = ["aspirin reduces fever", "aspirin causes bleeding ulcers", "ibuprofen reduces pain"]


def _items(texts: list[str], values: list[str] | None = None) -> list[CorpusItem]:
    values = values or ["v"] * len(texts)
    return [
        CorpusItem(f"d{i}", t, v, "toy", "qa") for i, (t, v) in enumerate(zip(texts, values, strict=True))
    ]


def _lucene(tf: int, dl: int, avgdl: float, df: int, n: int, k1: float = 1.5, b: float = 0.75) -> float:
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))


def test_pinned_hits_and_scores(tmp_path: Path) -> None:
    retriever = build_retriever("bm25", cache_root=tmp_path)
    retriever.index(_items(DOCS))
    hits = retriever.search({"q": "Aspirin fever?"}, k=3)["q"]
    # Lengths 3, 4, 3 (avg 10/3); "aspirin" is in 2 of 3 docs, "fever" in 1; d2 shares no term.
    avgdl = 10 / 3
    d0 = _lucene(1, 3, avgdl, 2, 3) + _lucene(1, 3, avgdl, 1, 3)
    d1 = _lucene(1, 4, avgdl, 2, 3)
    assert d0 == pytest.approx(0.6076796, abs=1e-6) and d1 == pytest.approx(0.1724786, abs=1e-6)
    assert [(h.doc_id, h.rank) for h in hits] == [("d0", 0), ("d1", 1)]
    assert [h.score for h in hits] == pytest.approx([d0, d1], rel=1e-6)
    assert (hits[0].key, hits[0].value, hits[0].dataset) == ("aspirin reduces fever", "v", "toy")


def test_stopwords_are_configurable(tmp_path: Path) -> None:
    texts = ["the cat", "the dog sat"]
    english = build_retriever("bm25", cache_root=tmp_path)
    english.index(_items(texts))
    assert english.search({"q": "the"}, 2)["q"] == []  # "the" is an English stopword: no term, no hits
    plain = build_retriever("bm25", {"stopwords": "none"}, cache_root=tmp_path)
    plain.index(_items(texts))
    assert [h.doc_id for h in plain.search({"q": "the"}, 2)["q"]] == ["d0", "d1"]  # shorter doc first


def test_top1_keeps_ties_and_dedupes_identical_items(tmp_path: Path) -> None:
    texts = ["aspirin fever", "aspirin fever", "aspirin fever", "aspirin headache"]
    items = _items(texts, ["A", "A", "B", "C"])
    tied = build_retriever("bm25", {"keep_ties": True}, cache_root=tmp_path)
    tied.index(items)
    assert [h.doc_id for h in tied.search({"q": "aspirin fever"}, 1)["q"]] == ["d0", "d2"]  # d1 == d0
    plain = build_retriever("bm25", cache_root=tmp_path)
    plain.index(items)
    assert [h.doc_id for h in plain.search({"q": "aspirin fever"}, 1)["q"]] == ["d0"]
    everything = build_retriever("bm25", {"keep_ties": True, "dedupe": False}, cache_root=tmp_path)
    everything.index(items)
    hits = everything.search({"q": "aspirin fever"}, 1)["q"]
    assert [h.doc_id for h in hits] == ["d0", "d1", "d2"] and [h.rank for h in hits] == [0, 1, 2]
    assert len({h.score for h in hits}) == 1


def test_ties_beyond_the_first_candidate_batch_are_all_kept(tmp_path: Path) -> None:
    items = _items([f"shared token{i}" for i in range(100)], [f"v{i}" for i in range(100)])
    retriever = build_retriever("bm25", {"keep_ties": True}, cache_root=tmp_path)
    retriever.index(items)
    hits = retriever.search({"q": "shared"}, 1)["q"]
    assert [h.doc_id for h in hits] == [f"d{i}" for i in range(100)]  # all 100 tie; corpus order


def test_index_is_persisted_and_reused(tmp_path: Path) -> None:
    first = build_retriever("bm25", cache_root=tmp_path)
    first.index(_items(DOCS))
    assert not first.loaded_from_cache and first.index_path is not None and first.index_path.is_dir()
    assert first.index_path.parent.parent == tmp_path / "indexes"
    again = build_retriever("bm25", {"keep_ties": True}, cache_root=tmp_path)  # search-only param: same index
    again.index(_items(DOCS, ["x", "y", "z"]))  # values are not indexed (fields=key): same index
    assert again.loaded_from_cache and again.index_path == first.index_path
    assert again.search({"q": "aspirin fever"}, 1)["q"][0].value == "x"
    other = build_retriever("bm25", {"k1": 1.2}, cache_root=tmp_path)
    other.index(_items(DOCS))
    assert not other.loaded_from_cache and other.fingerprint != first.fingerprint


def test_key_value_indexing_matches_labels(tmp_path: Path) -> None:
    retriever = build_retriever("bm25", {"fields": "key_value"}, cache_root=tmp_path)
    retriever.index(_items(["drug one", "drug two"], ["effect", "dosage"]))
    assert [h.doc_id for h in retriever.search({"q": "dosage"}, 1)["q"]] == ["d1"]


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_k_must_be_positive(tmp_path: Path, k: object) -> None:
    retriever = build_retriever("bm25", cache_root=tmp_path)
    retriever.index(_items(DOCS))
    with pytest.raises(RetrievalError, match="k must be a positive integer"):
        retriever.search({"q": "aspirin"}, k)  # type: ignore[arg-type]


def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    retriever = build_retriever("bm25", cache_root=tmp_path)
    with pytest.raises(RetrievalError, match="empty corpus"):
        retriever.index([])
    with pytest.raises(RetrievalError, match="before search"):
        retriever.search({"q": "x"}, 1)
    with pytest.raises(RetrievalError, match="occurs twice"):
        retriever.index([*_items(DOCS), _items(DOCS)[0]])
    with pytest.raises(UnknownNameError, match="Did you mean 'bm25'"):
        build_retriever("bm52")
    with pytest.raises(ConfigError, match="k2"):
        build_retriever("bm25", {"k2": 1.0})


def test_a_damaged_persisted_index_names_the_folder(tmp_path: Path) -> None:
    first = build_retriever("bm25", cache_root=tmp_path)
    first.index(_items(DOCS))
    assert first.index_path is not None
    for path in first.index_path.iterdir():
        path.write_bytes(b"garbage")
    with pytest.raises(RetrievalError, match="delete the folder"):
        build_retriever("bm25", cache_root=tmp_path).index(_items(DOCS))


def test_no_queries_give_no_results(tmp_path: Path) -> None:
    retriever = build_retriever("bm25", cache_root=tmp_path)
    retriever.index(_items(DOCS))
    assert retriever.search({}, 3) == {}


def test_importing_the_packages_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, biorab.retrieval, biorab.corpora, biorab.cli.retrieve\n"
        "print(','.join(m for m in ('bm25s', 'faiss', 'torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_variant_lowercasing_and_token_pattern_are_configurable(tmp_path: Path) -> None:
    # ATIRE: idf = ln(N / df), tf part = tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl)); "fever" only in d0.
    atire = build_retriever("bm25", {"method": "atire"}, cache_root=tmp_path)
    atire.index(_items(DOCS))
    expected = math.log(3) * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 3 / (10 / 3)))
    assert expected == pytest.approx(1.1503789, abs=1e-6)
    hits = atire.search({"q": "fever"}, 3)["q"]
    assert [h.doc_id for h in hits] == ["d0"] and hits[0].score == pytest.approx(expected, rel=1e-6)
    cased = build_retriever("bm25", {"lower": False}, cache_root=tmp_path)
    cased.index(_items(["Aspirin helps", "aspirin hurts"]))
    assert [h.doc_id for h in cased.search({"q": "Aspirin"}, 2)["q"]] == ["d0"]
    digits = build_retriever("bm25", {"token_pattern": r"\d+"}, cache_root=tmp_path)
    digits.index(_items(["dose 10 mg", "dose 20 mg"]))
    assert [h.doc_id for h in digits.search({"q": "dose 20"}, 2)["q"]] == ["d1"]  # "dose" is no token


def _okapi(tf: int, dl: int, avgdl: float, idf: float, k1: float = 1.5, b: float = 0.75) -> float:
    return idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))


def test_okapi_mode_equals_rank_bm25(tmp_path: Path) -> None:
    """``method: okapi`` is rank_bm25's BM25Okapi: a term in more than half of the documents gets
    0.25 x the mean idf (bm25s's ``robertson`` gives it 0), in float64."""
    from rank_bm25 import BM25Okapi

    retriever = build_retriever("bm25", {"method": "okapi", "dedupe": False}, cache_root=tmp_path)
    retriever.index(_items(DOCS))
    # 8 terms: 6 in one document (idf log(2.5/1.5)), "aspirin" and "reduces" in two (negative idf -> floor)
    idf1 = math.log(2.5 / 1.5)
    floor = 0.25 * (6 * idf1 - 2 * idf1) / 8
    avgdl = 10 / 3
    d0 = _okapi(1, 3, avgdl, floor) + _okapi(1, 3, avgdl, idf1)
    d1 = _okapi(1, 4, avgdl, floor)
    assert d0 == pytest.approx(0.6017579, abs=1e-6) and d1 == pytest.approx(0.0585809, abs=1e-6)
    scores = retriever.scores("Aspirin fever?")
    assert scores.tolist() == pytest.approx([d0, d1, 0.0], rel=1e-12)
    reference = BM25Okapi(retriever.tokenize(DOCS)).get_scores(retriever.tokenize(["Aspirin fever?"])[0])
    assert scores.tolist() == pytest.approx(reference.tolist(), rel=1e-12)
    hits = retriever.search({"q": "Aspirin fever?"}, k=3)["q"]  # the batched search path, float64 scores
    assert [(h.doc_id, h.score) for h in hits] == [("d0", pytest.approx(d0, rel=1e-12)),
                                                    ("d1", pytest.approx(d1, rel=1e-12))]  # fmt: skip
    robertson = build_retriever("bm25", {"method": "robertson", "dedupe": False}, cache_root=tmp_path)
    robertson.index(_items(DOCS))
    assert robertson.scores("Aspirin fever?")[1] == 0.0  # clipped: the cause of the MedMCQA disagreements


def test_okapi_epsilon_leaves_other_fingerprints_alone(tmp_path: Path) -> None:
    # pinned before `epsilon` existed: index folders and hit caches of the other variants stay valid
    lucene = build_retriever("bm25", cache_root=tmp_path)
    assert lucene.fingerprint == "09b824d2ff580201f714a574cc7326e53f1fc2e75986b8ca46c55ea792c2e55a"
    assert lucene.index_fingerprint == "cd414bf450b8d94bc84d0351c9fef0f7a04f4319bfa5cc3a2028d253672b64ee"
    okapi = [
        build_retriever("bm25", {"method": "okapi", "epsilon": e}, cache_root=tmp_path) for e in (0.25, 0.5)
    ]
    assert okapi[0].index_fingerprint != okapi[1].index_fingerprint
