"""`CachedRetriever`: an indexed retriever, the selection rule (k, ties, dedupe) and the hit cache together.

The selection of hits belongs to the retrieval side (`biorab.retrieval.selection`: the `Selection` fields
and `search_selected`, which applies them); the RAL core only asks for "the hits of these queries". Hit
cache keys are (retriever fingerprint, corpus digest, query, the selection's fields), unchanged from the
runner's earlier keys, so existing caches stay valid. An optional hit filter (e.g. the trained awareness
encoder, `biorab.learn.hit_filter`) drops or re-ranks the selected hits; its fingerprint enters the key only
when a filter is set. An evidence order (`biorab.ral.specs.evidence_order`) is applied to the hits after the
cache, so the cache holds (and a plan predicts) the same hits whatever the order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from biorab.caches import HitStore, hits_key
from biorab.common.records import Hit
from biorab.generation.base import stable_digest
from biorab.ral.parts.plugins import HitFilter
from biorab.ral.specs.answer import RetrievedHits
from biorab.ral.specs.evidence_order import HitOrder
from biorab.retrieval.selection import Selection, search_selected


class CachedRetriever:
    """Searches an already indexed retriever over a corpus of digest `corpus_digest`, through `store`,
    passing the selected hits through `hit_filter` when one is given, then showing them in `order` (``None``:
    as retrieved)."""

    def __init__(self, retriever: Any, corpus_digest: str, selection: Selection,
                 store: HitStore | None = None, hit_filter: HitFilter | None = None,
                 order: HitOrder | None = None) -> None:
        self.retriever = retriever
        self.corpus_digest = corpus_digest
        self.selection = selection
        self.store = store
        self.hit_filter = hit_filter
        self.order = order
        self._other_k: dict[int, CachedRetriever] = {}

    def with_k(self, k: int | None) -> CachedRetriever:
        """This retriever with `k` hits per query (same index, ties, filter and cache); ``None``: as is."""
        if k is None or k == self.selection.k:
            return self
        if k not in self._other_k:
            selection = Selection(**{**self.selection.model_dump(), "k": k})
            self._other_k[k] = CachedRetriever(self.retriever, self.corpus_digest, selection, self.store,
                                               self.hit_filter, self.order)
        return self._other_k[k]

    def key(self, query: str) -> str:
        key = hits_key(retriever=self.retriever.fingerprint, corpus=self.corpus_digest, query=query,
                       **self.selection.key_fields())
        return key if self.hit_filter is None else stable_digest([key, "filter", self.hit_filter.fingerprint])

    def _filtered(self, query: str, hits: list[Hit]) -> list[Hit]:
        return hits if self.hit_filter is None else self.hit_filter.apply(query, hits)

    def search(self, queries: Mapping[str, str], k: int | None = None) -> dict[str, RetrievedHits]:
        """Query id → its selected hits (best first), from the cache where present (`k`: another number
        of hits than the selection's)."""
        if k is not None and k != self.selection.k:
            return self.with_k(k).search(queries)
        keys = {qid: self.key(text) for qid, text in queries.items()}
        cached = self.store.get_many(list(keys.values())) if self.store is not None else {}
        missing = {qid: text for qid, text in queries.items() if keys[qid] not in cached}
        fresh: dict[str, list[Hit]] = {}
        if missing:
            selected = search_selected(self.retriever, missing, self.selection)
            fresh = {keys[q]: self._filtered(text, selected[q]) for q, text in missing.items()}
            if self.store is not None:
                self.store.put_many(fresh)
        found = {qid: RetrievedHits(tuple(cached[key]), True) if key in cached
                 else RetrievedHits(tuple(fresh[key]), False) for qid, key in keys.items()}
        if self.order is None:
            return found
        return {qid: RetrievedHits(tuple(self.order.apply(queries[qid], got.hits)), got.cached)
                for qid, got in found.items()}


def build_testbed_retriever(
    *,
    testbed: str,
    dataset: str,
    retriever: str,
    params: Mapping[str, Any] | None = None,
    rate: float | None = None,
    seed: int = 0,
    data_dir: str | None = None,
    selection: Selection | None = None,
    store: HitStore | None = None,
    hit_filter: HitFilter | None = None,
    transform: Callable[[Any, Any], Any] | None = None,
    pool: list[str] | None = None,
) -> CachedRetriever:
    """Build the `testbed` corpus of `dataset`, index it with `retriever` (its `params` under the selection:
    `Selection.index_params`), and wrap it with its selection.

    `transform` (corpus, ledger) -> corpus replaces the testbed corpus before indexing (the paper's
    methods, `biorab.methods.StoredTransform`); the transformed corpus's digest then keys the index and the
    hits. Indexes are persisted by (retriever, corpus content), so a second call loads instead of
    rebuilding; the testbed corpus is built once per process (`biorab.ral.parts.testbeds.testbed_corpus`)."""
    from biorab.ral.parts.testbeds import testbed_corpus
    from biorab.retrieval import build_retriever

    corpus, ledger = testbed_corpus(testbed, dataset, rate=rate, seed=seed, data_dir=data_dir, pool=pool)
    if transform is not None:
        corpus = transform(corpus, ledger)
    selection = selection or Selection()
    index = build_retriever(retriever, selection.index_params(params or {}))
    index.index(corpus.items)
    return CachedRetriever(index, corpus.digest, selection, store, hit_filter)
