"""The retrieval stage: each instance's query → its hits, through the content-keyed hit store.

`RetrievalStage` builds each cell's corpus and index once (lazily, on the first row of that cell) and is
used unchanged by the in-process runner and, as a Ray Data actor, by the pipeline.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.records import Hit
from biorab.runner.plan import CellPlan
from biorab.runner.rows import hits_json
from biorab.runner.stores import HitStore, hits_key


def select_hits(hits: Sequence[Hit], k: int, *, keep_ties: bool, dedupe: bool = True) -> list[Hit]:
    """The top `k` hits, plus (with `keep_ties`) every later hit tied with the k-th score, and (with
    `dedupe`) without duplicate (key, value) pairs. `hits` are best first, as `Retriever.search` returns them.

    >>> h = [Hit("a", 2.0, 0, "x", "1"), Hit("b", 2.0, 1, "y", "1"), Hit("c", 1.0, 2, "z", "0")]
    >>> [x.doc_id for x in select_hits(h, 1, keep_ties=True)]
    ['a', 'b']
    >>> [x.doc_id for x in select_hits(h, 1, keep_ties=False)]
    ['a']
    >>> d = [Hit("a", 2.0, 0, "x", "1"), Hit("b", 1.5, 1, "x", "1"), Hit("c", 1.0, 2, "z", "0")]
    >>> [x.doc_id for x in select_hits(d, 2, keep_ties=False)], [x.doc_id for x in select_hits(d, 2,
    ...     keep_ties=False, dedupe=False)]
    (['a'], ['a', 'b'])
    """
    chosen = list(hits[:k])
    if keep_ties and chosen and len(hits) > k:
        edge = chosen[-1].score
        chosen += [h for h in hits[k:] if math.isclose(h.score, edge, rel_tol=1e-9, abs_tol=1e-12)]
    if not dedupe:
        return chosen
    seen: set[tuple[str, str | None]] = set()
    unique = []
    for hit in chosen:
        if (hit.key, hit.value) not in seen:
            seen.add((hit.key, hit.value))
            unique.append(hit)
    return unique


@dataclass
class _Index:
    retriever: Any
    fingerprint: str
    corpus_digest: str


class RetrievalStage:
    """Callable on a batch of rows: fills ``hits`` and ``retrieval_cached`` for rows of retrieving cells."""

    def __init__(self, plans: Mapping[str, CellPlan], hits_store: str | Path) -> None:
        self.plans = dict(plans)
        self.store = HitStore(hits_store)
        self._indexes: dict[tuple[Any, ...], _Index] = {}

    def _index_for(self, plan: CellPlan) -> _Index:
        r = plan.retrieval
        params = r.retriever_params
        spec = (r.testbed, r.rate, plan.dataset, plan.seed, plan.data_dir, r.retriever,
                tuple(sorted((k, repr(v)) for k, v in params.items())))
        if spec not in self._indexes:
            from biorab.corpora import build_corpus
            from biorab.retrieval import build_retriever

            corpus, _ledger = build_corpus(r.testbed, plan.dataset, rate=r.rate, seed=plan.seed,
                                           data_dir=plan.data_dir)
            retriever = build_retriever(r.retriever, params)
            retriever.index(corpus.items)
            self._indexes[spec] = _Index(retriever, retriever.fingerprint, corpus.digest)
        return self._indexes[spec]

    def __call__(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        by_cell: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            if self.plans[row["cell_id"]].retrieves:
                by_cell.setdefault(row["cell_id"], []).append(row)
            else:
                row.update(hits="[]", retrieval_cached=None)
        for cell_id, cell_rows in by_cell.items():
            self._retrieve_cell(self.plans[cell_id], cell_rows)
        return rows

    def _retrieve_cell(self, plan: CellPlan, rows: list[dict[str, Any]]) -> None:
        r = plan.retrieval
        index = self._index_for(plan)
        keys = {
            row["id"]: hits_key(retriever=index.fingerprint, corpus=index.corpus_digest, query=row["text"],
                                k=r.k, keep_ties=r.keep_ties, tie_pool=r.tie_pool, dedupe=r.dedupe)
            for row in rows
        }
        cached = self.store.get_many(list(keys.values()))
        missing = {row["id"]: row["text"] for row in rows if keys[row["id"]] not in cached}
        fresh: dict[str, list[Hit]] = {}
        if missing:
            depth = r.k + (r.tie_pool if r.keep_ties else 0)
            found = index.retriever.search(missing, depth)
            fresh = {keys[q]: select_hits(found.get(q, []), r.k, keep_ties=r.keep_ties, dedupe=r.dedupe)
                     for q in missing}
            self.store.put_many(fresh)
        for row in rows:
            key = keys[row["id"]]
            row.update(hits=hits_json(cached.get(key, fresh.get(key, []))), retrieval_cached=key in cached)
