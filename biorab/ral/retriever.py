"""`CachedRetriever`: an indexed retriever, the selection rule (k, ties, dedupe) and the hit cache together.

The selection of hits belongs to the retrieval side (`biorab.retrieval.ranking.select_hits`); the RAL core
only asks for "the hits of these queries". Hit cache keys are (retriever fingerprint, corpus digest, query,
k, tie rule, dedupe), unchanged from the runner's earlier keys, so existing caches stay valid. An optional
hit filter (e.g. the trained awareness encoder, `biorab.learn.hit_filter`) drops or re-ranks the selected
hits; its fingerprint enters the key only when a filter is set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from biorab.caches import HitStore, hits_key
from biorab.generation.base import stable_digest
from biorab.ral.answer import RetrievedHits
from biorab.records import Hit


@dataclass(frozen=True)
class Selection:
    """How many retrieved examples go into a prompt, and how ties and duplicates are treated."""

    k: int = 1
    keep_ties: bool = True
    tie_pool: int = 8
    dedupe: bool = True

    @property
    def depth(self) -> int:
        """How many candidates to ask the index for, so that ties with the k-th hit can be found."""
        return self.k + (self.tie_pool if self.keep_ties else 0)


class HitFilter(Protocol):
    """Keeps (and may re-rank) the selected hits of a query; `fingerprint` names it in hit cache keys."""

    fingerprint: str

    def apply(self, query: str, hits: Sequence[Hit]) -> list[Hit]: ...


class CachedRetriever:
    """Searches an already indexed retriever over a corpus of digest `corpus_digest`, through `store`,
    passing the selected hits through `hit_filter` when one is given."""

    def __init__(self, retriever: Any, corpus_digest: str, selection: Selection,
                 store: HitStore | None = None, hit_filter: HitFilter | None = None) -> None:
        self.retriever = retriever
        self.corpus_digest = corpus_digest
        self.selection = selection
        self.store = store
        self.hit_filter = hit_filter

    def key(self, query: str) -> str:
        s = self.selection
        key = hits_key(retriever=self.retriever.fingerprint, corpus=self.corpus_digest, query=query, k=s.k,
                       keep_ties=s.keep_ties, tie_pool=s.tie_pool, dedupe=s.dedupe)
        return key if self.hit_filter is None else stable_digest([key, "filter", self.hit_filter.fingerprint])

    def _filtered(self, query: str, hits: list[Hit]) -> list[Hit]:
        return hits if self.hit_filter is None else self.hit_filter.apply(query, hits)

    def search(self, queries: Mapping[str, str]) -> dict[str, RetrievedHits]:
        """Query id → its selected hits (best first), from the cache where present."""
        from biorab.retrieval.ranking import select_hits

        keys = {qid: self.key(text) for qid, text in queries.items()}
        cached = self.store.get_many(list(keys.values())) if self.store is not None else {}
        missing = {qid: text for qid, text in queries.items() if keys[qid] not in cached}
        fresh: dict[str, list[Hit]] = {}
        if missing:
            s = self.selection
            found = self.retriever.search(missing, s.depth)
            fresh = {keys[q]: self._filtered(text, select_hits(found.get(q, []), s.k, keep_ties=s.keep_ties,
                                                               dedupe=s.dedupe))
                     for q, text in missing.items()}
            if self.store is not None:
                self.store.put_many(fresh)
        return {qid: RetrievedHits(tuple(cached[key]), True) if key in cached
                else RetrievedHits(tuple(fresh[key]), False) for qid, key in keys.items()}


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
) -> CachedRetriever:
    """Build the `testbed` corpus of `dataset`, index it with `retriever`, and wrap it with its selection.

    `transform` (corpus, ledger) -> corpus replaces the testbed corpus before indexing (the paper's
    methods, `biorab.methods.StoredTransform`); the transformed corpus's digest then keys the index and the
    hits. Indexes are persisted by (retriever, corpus content), so a second call loads instead of
    rebuilding."""
    from biorab.corpora import build_corpus
    from biorab.retrieval import build_retriever

    corpus, ledger = build_corpus(testbed, dataset, rate=rate, seed=seed, data_dir=data_dir)
    if transform is not None:
        corpus = transform(corpus, ledger)
    index = build_retriever(retriever, dict(params or {}))
    index.index(corpus.items)
    return CachedRetriever(index, corpus.digest, selection or Selection(), store, hit_filter)
