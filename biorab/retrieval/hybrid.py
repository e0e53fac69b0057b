"""Hybrid retrieval: reciprocal-rank fusion (Cormack et al., 2009) of any two retrievers.

Each retriever returns its best `depth` hits; an item's fused score is the sum over retrievers of
``weight / (rrf_k + rank)`` with 1-based ranks. Items one retriever did not return contribute nothing from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from biorab.common.params import Params
from biorab.common.records import CorpusItem, Hit
from biorab.retrieval.base import check_items, check_k, digest_json
from biorab.retrieval.ranking import order_candidates, select, to_hits


class RetrieverSpec(Params):
    """A retriever by registry name and its params."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)


class HybridParams(Params):
    """Hybrid params.

    Attributes:
        first, second: the fused retrievers (default: ``bm25`` and ``dense``).
        rrf_k: the RRF constant (60 in the RRF paper).
        depth: how many hits each retriever contributes (at least k are always asked for).
        weights: the weight of each retriever's reciprocal ranks.
        keep_ties, dedupe: as for every retriever, applied to the fused scores.
    """

    first: RetrieverSpec = RetrieverSpec(name="bm25")
    second: RetrieverSpec = RetrieverSpec(name="dense")
    rrf_k: float = Field(default=60.0, gt=0)
    depth: int = Field(default=100, ge=1)
    weights: tuple[float, float] = (1.0, 1.0)
    keep_ties: bool = False
    dedupe: bool = True


class HybridRetriever:
    """Reciprocal-rank fusion of two retrievers built from the registry."""

    name = "hybrid"
    Params = HybridParams
    cheap_fingerprint = False  # its parts may need a model (the default second part is dense)

    @classmethod
    def encoder_params(cls, encoder: str | None, model: str | None) -> dict[str, Any] | None:
        """The encoder flags go to the dense second part (the first stays BM25)."""
        from biorab.common.registry import RETRIEVERS

        return {"second": {"name": "dense", "params": RETRIEVERS.get("dense").encoder_params(encoder, model)}}

    def __init__(self, params: HybridParams | None = None, *, cache_root: str | Path | None = None) -> None:
        from biorab.retrieval import build_retriever

        self.params = params if params is not None else HybridParams()
        self.first = build_retriever(self.params.first.name, self.params.first.params, cache_root=cache_root)
        self.second = build_retriever(
            self.params.second.name, self.params.second.params, cache_root=cache_root
        )
        self._items: list[CorpusItem] = []
        self._positions: dict[str, int] = {}

    @property
    def fingerprint(self) -> str:
        """Digest of the fusion params and both retrievers' fingerprints."""
        own = self.params.model_dump(mode="json", exclude={"first", "second"})
        return digest_json(
            {
                "retriever": self.name,
                "params": own,
                "first": self.first.fingerprint,
                "second": self.second.fingerprint,
            }
        )

    def index(self, items: Sequence[CorpusItem]) -> None:
        """Index the corpus in both retrievers."""
        self._items = check_items(items)
        self._positions = {item.id: position for position, item in enumerate(self._items)}
        self.first.index(self._items)
        self.second.index(self._items)

    def search(self, queries: Mapping[str, str], k: int) -> dict[str, list[Hit]]:
        """The top-`k` fused hits for each query id."""
        check_k(k)
        depth = max(k, self.params.depth)
        runs = (self.first.search(queries, depth), self.second.search(queries, depth))
        keys = [(i.key, i.value) for i in self._items] if self.params.dedupe else None
        out = {}
        for qid in queries:
            fused: dict[int, float] = {}
            for weight, run in zip(self.params.weights, runs, strict=True):
                for hit in run[qid]:
                    position = self._positions[hit.doc_id]
                    fused[position] = fused.get(position, 0.0) + weight / (self.params.rrf_k + hit.rank + 1)
            positions = np.fromiter(fused, dtype=np.int64, count=len(fused))
            scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
            ordered_scores, ordered_positions = order_candidates(scores, positions)
            picked = select(
                ordered_scores,
                ordered_positions,
                k,
                keep_ties=self.params.keep_ties,
                dedupe_keys=keys,
                complete=True,
            ).picked
            out[qid] = to_hits(self._items, picked)
        return out
