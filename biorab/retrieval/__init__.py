"""Retrievers behind one protocol: ``index(corpus)`` then ``search(queries, k) -> {qid: [Hit]}``.

Built-ins: ``bm25`` (bm25s), ``dense`` (an encoder + faiss exact inner product, HNSW optional) and
``hybrid`` (reciprocal-rank fusion of two retrievers). All register lazily, so importing this package
imports neither bm25s, faiss nor torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biorab.common.build import build
from biorab.common.registry import RETRIEVERS
from biorab.retrieval.base import Retriever, RetrieverParams, check_k
from biorab.retrieval.quality import mean_reciprocal_rank, recall_at_k

RETRIEVERS.add_lazy("bm25", "biorab.retrieval.bm25:BM25Retriever")
RETRIEVERS.add_lazy("dense", "biorab.retrieval.dense:DenseRetriever")
RETRIEVERS.add_lazy("hybrid", "biorab.retrieval.hybrid:HybridRetriever")


def build_retriever(
    name: str, params: Mapping[str, Any] | None = None, *, cache_root: str | Path | None = None
) -> Retriever:
    """Build retriever `name` from a params mapping (validated against its ``Params``).

    Args:
        name: ``bm25``, ``dense`` or ``hybrid`` (or any name registered in `RETRIEVERS`).
        params: the retriever's params; unknown keys are a `ConfigError` naming the key.
        cache_root: where indexes are persisted (default `biorab.common.paths.cache_dir()`).

    Raises:
        UnknownNameError: `name` is not registered (the message lists the known names).
    """
    retriever: Retriever = build(RETRIEVERS, name, params, cache_root=cache_root)
    return retriever


__all__ = [
    "Retriever",
    "RetrieverParams",
    "build_retriever",
    "check_k",
    "mean_reciprocal_rank",
    "recall_at_k",
]
