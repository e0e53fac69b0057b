"""Hybrid RRF fusion against hand-computed scores, and recall@k / MRR against hand-computed values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, RetrievalError
from biorab.common.records import CorpusItem, Hit
from biorab.common.registry import RETRIEVERS
from biorab.retrieval import build_retriever
from biorab.retrieval.quality import (
    canonical_ids,
    evaluate,
    mean_reciprocal_rank,
    recall_at_k,
    self_judgements,
)

ITEMS = [
    CorpusItem(f"d{i}", t, "v", "toy", "qa")
    for i, t in enumerate(
        ["aspirin reduces fever", "aspirin causes bleeding", "ibuprofen reduces pain", "fever and pain"]
    )
]


class ReversedBM25:
    """A fake second retriever: BM25's hit list reversed, so the fused ranks are known."""

    def __init__(self, *, cache_root: Path | None = None) -> None:
        self.inner = build_retriever("bm25", {"stopwords": "none"}, cache_root=cache_root)
        self.fingerprint = "reversed-" + self.inner.fingerprint

    def index(self, items: Sequence[CorpusItem]) -> None:
        self.inner.index(items)

    def search(self, queries: Mapping[str, str], k: int) -> dict[str, list[Hit]]:
        out = self.inner.search(queries, k)
        return {
            q: [Hit(h.doc_id, h.score, r, h.key, h.value) for r, h in enumerate(reversed(hs))]
            for q, hs in out.items()
        }


@pytest.fixture
def reversed_registered() -> Iterator[None]:
    RETRIEVERS.add("reversed_bm25_test", ReversedBM25)
    yield
    RETRIEVERS._objects.pop("reversed_bm25_test", None)  # the registry has no public remove


def test_rrf_scores_are_the_sum_of_reciprocal_ranks(tmp_path: Path, reversed_registered: None) -> None:
    params = {
        "first": {"name": "bm25", "params": {"stopwords": "none"}},
        "second": {"name": "reversed_bm25_test"},
        "rrf_k": 10,
        "weights": (1.0, 2.0),
    }
    hybrid = build_retriever("hybrid", params, cache_root=tmp_path)
    hybrid.index(ITEMS)
    bm25 = build_retriever("bm25", {"stopwords": "none"}, cache_root=tmp_path)
    bm25.index(ITEMS)
    order = [h.doc_id for h in bm25.search({"q": "aspirin fever pain"}, 100)["q"]]
    assert len(order) == 4
    expected = {d: 1 / (10 + r + 1) + 2 / (10 + (len(order) - 1 - r) + 1) for r, d in enumerate(order)}
    hits = hybrid.search({"q": "aspirin fever pain"}, 4)["q"]
    assert {h.doc_id: h.score for h in hits} == pytest.approx(expected)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert [h.rank for h in hits] == [0, 1, 2, 3]


def test_hybrid_params_are_validated(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="rrf_k"):
        build_retriever("hybrid", {"rrf_k": 0}, cache_root=tmp_path)
    with pytest.raises(ConfigError, match="depht"):
        build_retriever("hybrid", {"depht": 5}, cache_root=tmp_path)


def _hit(doc: str, rank: int) -> Hit:
    return Hit(doc, 1.0 / (rank + 1), rank, "", None)


def test_recall_and_mrr_by_hand() -> None:
    hits = {"a": [_hit("x", 0), _hit("y", 1), _hit("z", 2)], "b": [_hit("y", 0)], "c": []}
    relevant = {"a": {"y", "w"}, "b": {"y"}, "c": {"x"}, "unjudged": set()}
    assert recall_at_k(hits, relevant, 1) == pytest.approx((0 + 1 + 0) / 3)
    assert recall_at_k(hits, relevant, 2) == pytest.approx((0.5 + 1 + 0) / 3)
    assert mean_reciprocal_rank(hits, relevant) == pytest.approx((1 / 2 + 1 + 0) / 3)
    assert mean_reciprocal_rank(hits, relevant, k=1) == pytest.approx(1 / 3)
    with pytest.raises(RetrievalError, match="no query has a relevant"):
        recall_at_k(hits, {"a": set()}, 1)


def test_self_judgements_group_identical_keys() -> None:
    items = [
        CorpusItem("i0", "s1", "A", "t", "qa"),
        CorpusItem("i1", "s1", "A", "t", "qa"),
        CorpusItem("i2", "s1", "B", "t", "qa"),
        CorpusItem("i3", "s2", "A", "t", "qa"),
    ]
    assert canonical_ids(items) == {"i0": "i0", "i1": "i0", "i2": "i2", "i3": "i3"}
    judgements = self_judgements(items)
    assert judgements.queries == {"i0": "s1", "i3": "s2"}
    assert judgements.relevant == {"i0": {"i0", "i2"}, "i3": {"i3"}}
    assert len(self_judgements(items, limit=1, seed=0).queries) == 1


def test_bm25_known_item_retrieval_is_perfect_on_distinct_keys(tmp_path: Path) -> None:
    bm25 = build_retriever("bm25", cache_root=tmp_path)
    bm25.index(ITEMS)
    judgements = self_judgements(ITEMS)
    report = evaluate(bm25.search(judgements.queries, 10), judgements, ITEMS, [1, 10])
    assert report.to_json() == {"recall@1": 1.0, "recall@10": 1.0, "mrr": 1.0, "n": 4}
