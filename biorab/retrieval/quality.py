"""Retrieval quality where relevance is known: recall@k and MRR, and the relevance judgements we can build.

Relevance here is judged on corpus item ids. Items with identical (key, value) count as one document
(retrievers de-duplicate them), so judgements and hits are mapped to the first id of each identical group
(`canonical_ids`) before they are compared.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from biorab.common.errors import RetrievalError
from biorab.common.records import CorpusItem, Hit


def recall_at_k(hits: Mapping[str, Sequence[Hit]], relevant: Mapping[str, set[str]], k: int) -> float:
    """Mean over judged queries of |relevant ∩ first k hits| / |relevant|.

    >>> h = {"q": [Hit("a", 2.0, 0, "", None), Hit("b", 1.0, 1, "", None)]}
    >>> recall_at_k(h, {"q": {"b", "c"}}, 2)
    0.5
    """
    judged = _judged(relevant)
    total = 0.0
    for qid in judged:
        found = {hit.doc_id for hit in hits.get(qid, [])[:k]}
        total += len(found & relevant[qid]) / len(relevant[qid])
    return total / len(judged)


def mean_reciprocal_rank(
    hits: Mapping[str, Sequence[Hit]], relevant: Mapping[str, set[str]], k: int | None = None
) -> float:
    """Mean over judged queries of 1 / (1-based position of the first relevant hit), 0 if none in `k`.

    >>> h = {"q": [Hit("a", 2.0, 0, "", None), Hit("b", 1.0, 1, "", None)], "r": []}
    >>> mean_reciprocal_rank(h, {"q": {"b"}, "r": {"a"}})
    0.25
    """
    judged = _judged(relevant)
    total = 0.0
    for qid in judged:
        ranked = hits.get(qid, [])
        for position, hit in enumerate(ranked[:k] if k else ranked, start=1):
            if hit.doc_id in relevant[qid]:
                total += 1.0 / position
                break
    return total / len(judged)


def _judged(relevant: Mapping[str, set[str]]) -> list[str]:
    judged = [qid for qid, docs in relevant.items() if docs]
    if not judged:
        raise RetrievalError("no query has a relevant document; recall and MRR are undefined")
    return judged


def canonical_ids(items: Sequence[CorpusItem]) -> dict[str, str]:
    """Map each item id to the first id of the items with the same (key, value)."""
    first: dict[tuple[str, str | None], str] = {}
    return {item.id: first.setdefault((item.key, item.value), item.id) for item in items}


def canonical_hits(hits: Mapping[str, Sequence[Hit]], canonical: Mapping[str, str]) -> dict[str, list[Hit]]:
    """Hits with their doc ids replaced by the canonical ids."""
    from dataclasses import replace

    return {
        qid: [replace(h, doc_id=canonical.get(h.doc_id, h.doc_id)) for h in hs] for qid, hs in hits.items()
    }


@dataclass(frozen=True)
class Judgements:
    """Queries and, per query id, the canonical ids of its relevant items."""

    queries: dict[str, str]
    relevant: dict[str, set[str]]


def self_judgements(items: Sequence[CorpusItem], *, limit: int | None = None, seed: int = 0) -> Judgements:
    """Known-item retrieval: each distinct key is a query whose relevant documents are the items with that
    key. `limit` samples that many distinct keys with `seed` (all when None)."""
    canonical = canonical_ids(items)
    by_key: dict[str, set[str]] = {}
    first_id: dict[str, str] = {}
    for item in items:
        by_key.setdefault(item.key, set()).add(canonical[item.id])
        first_id.setdefault(item.key, item.id)
    keys = list(by_key)
    if limit is not None and limit < len(keys):
        keys = random.Random(seed).sample(keys, limit)
    return Judgements(
        queries={first_id[key]: key for key in keys},
        relevant={first_id[key]: by_key[key] for key in keys},
    )


@dataclass(frozen=True)
class QualityReport:
    """recall@k for each k and MRR over the judged queries."""

    recall: dict[int, float]
    mrr: float
    n: int

    def to_json(self) -> dict[str, float | int]:
        return {**{f"recall@{k}": v for k, v in self.recall.items()}, "mrr": self.mrr, "n": self.n}


def evaluate(
    hits: Mapping[str, Sequence[Hit]], judgements: Judgements, items: Sequence[CorpusItem], ks: Sequence[int]
) -> QualityReport:
    """Score `hits` (searched with k >= max(ks)) against `judgements` over the corpus `items`."""
    mapped = canonical_hits(hits, canonical_ids(items))
    recall = {k: recall_at_k(mapped, judgements.relevant, k) for k in sorted(set(ks))}
    mrr = mean_reciprocal_rank(mapped, judgements.relevant, max(ks))
    return QualityReport(recall=recall, mrr=mrr, n=len(_judged(judgements.relevant)))
