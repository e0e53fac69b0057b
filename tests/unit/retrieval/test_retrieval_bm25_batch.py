"""Batched BM25 candidates (one sparse product per block of queries) against the per-query scores, on toy
corpora built to hit the edge cases: repeated query tokens, queries sharing no term, zero scores, floor
scores, ties and blocks of one query."""

from __future__ import annotations

import numpy as np
import pytest

from biorab.common.records import CorpusItem
from biorab.retrieval import bm25_batch
from biorab.retrieval.bm25 import BM25Params, BM25Retriever
from biorab.retrieval.ranking import order_candidates

DOCS = [
    "aspirin reduces fever",
    "aspirin causes bleeding ulcers",
    "ibuprofen reduces pain",
    "common cold",
    "aspirin reduces fever",  # an exact duplicate: tied with d0 on every query
    "pain pain pain relief",
]
QUERIES = ["aspirin aspirin fever", "warfarin", "pain reduces", "", "ulcers bleeding aspirin pain relief"]


def _retriever(**params: object) -> BM25Retriever:
    items = [CorpusItem(f"d{i}", t, None, "toy", "qa") for i, t in enumerate(DOCS)]
    retriever = BM25Retriever(BM25Params(persist=False, **params))  # type: ignore[arg-type]
    retriever.index(items)
    return retriever


def _expected(retriever: BM25Retriever, query: str, m: int) -> tuple[list[float], list[int], bool]:
    scores, matching = retriever._score(query)
    ordered, positions = order_candidates(scores[matching], matching)
    return ordered[:m].tolist(), positions[:m].tolist(), m >= matching.size


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
@pytest.mark.parametrize("m", [1, 2, 6])
def test_batched_candidates_equal_per_query_scores(method: str, m: int) -> None:
    retriever = _retriever(method=method)
    got = retriever._candidates(QUERIES, m)
    for query, (scores, positions, complete) in zip(QUERIES, got, strict=True):
        want_scores, want_positions, want_complete = _expected(retriever, query, m)
        assert complete == want_complete
        if complete or m == 6:
            assert positions.tolist() == want_positions
        # Bit-identical scores; where ties at the m-th score cut the list, the same scores at every rank.
        assert scores.tolist() == want_scores


def test_no_shared_term_no_candidate() -> None:
    got = _retriever()._candidates(["warfarin", ""], 3)
    assert [(s.size, p.size, c) for s, p, c in got] == [(0, 0, True), (0, 0, True)]


def test_zero_scores_still_match() -> None:
    # atire's idf is log(N / df) = 0 for a term in every document: every document matches with score 0.
    texts = ["alpha beta", "alpha gamma", "alpha"]
    items = [CorpusItem(f"d{i}", t, None, "toy", "qa") for i, t in enumerate(texts)]
    retriever = BM25Retriever(BM25Params(persist=False, method="atire"))
    retriever.index(items)
    hits = retriever.search({"q": "alpha"}, k=3)["q"]
    assert [(h.doc_id, h.score) for h in hits] == [("d0", 0.0), ("d1", 0.0), ("d2", 0.0)]


def test_repeated_token_counts_twice() -> None:
    retriever = _retriever()
    (once, _, _), (twice, _, _) = retriever._candidates(["fever", "fever fever"], 1)
    assert twice[0] == 2 * once[0] > 0


def test_blocks_of_one_query(monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = _retriever()
    whole = retriever._candidates(QUERIES, 2)
    monkeypatch.setattr(bm25_batch, "BLOCK_CELLS", 1)  # one query per block
    assert bm25_batch.block_rows(len(DOCS)) == 1
    single = retriever._candidates(QUERIES, 2)
    for (a, pa, ca), (b, pb, cb) in zip(whole, single, strict=True):
        assert np.array_equal(a, b) and np.array_equal(pa, pb) and ca == cb


def test_tokenize_matches_bm25s() -> None:
    import bm25s

    texts = ["The Aspirin-induced ULCERS of 2 patients", "a an the", "x7 ü_ber Über"]
    for params in ({}, {"stopwords": "none", "lower": False}, {"stopwords": ("aspirin", "of")}):
        words = params.get("stopwords", "english")
        expected = bm25s.tokenize(
            texts,
            lower=bool(params.get("lower", True)),
            stopwords=None if words == "none" else list(words) if isinstance(words, tuple) else words,
            return_ids=False,
            show_progress=False,
        )
        assert BM25Retriever(BM25Params(**params)).tokenize(texts) == [list(t) for t in expected]  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["lucene", "robertson", "atire", "bm25l", "bm25+"])
def test_vectorized_index_equals_bm25s(method: str) -> None:
    import bm25s

    from biorab.retrieval.bm25_index import VectorizedBM25

    tokens = BM25Retriever(BM25Params()).tokenize(DOCS + ["common cold aspirin"])
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in tokens]
    reference = bm25s.BM25(method=method, k1=1.2, b=0.6)
    reference.index((ids, dict(vocab)), show_progress=False)
    fast = VectorizedBM25(method=method, k1=1.2, b=0.6)
    fast.index((ids, dict(vocab)), show_progress=False)
    for name in ("data", "indices", "indptr"):
        assert fast.scores[name].dtype == reference.scores[name].dtype
        assert np.array_equal(fast.scores[name], reference.scores[name])
    assert fast.scores["num_docs"] == reference.scores["num_docs"] == 7
    if method in ("bm25l", "bm25+"):
        assert np.array_equal(fast.nonoccurrence_array, reference.nonoccurrence_array)
    else:
        assert fast.nonoccurrence_array is None and reference.nonoccurrence_array is None
