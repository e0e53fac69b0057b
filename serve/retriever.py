"""The retriever deployment: one testbed corpus indexed once, searched through the hit cache.

The index comes from the content-keyed index cache (`biorab.retrieval`: keyed by retriever and corpus
digest); the first replica that finds none builds it and says so in the replica log.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from ray import serve

from biorab.caches import HitStore, default_store_paths
from biorab.ral import CachedRetriever, RetrievedHits, build_testbed_retriever
from biorab.retrieval.selection import Selection
from serve.stores import thread_safe

log = logging.getLogger("ray.serve")


@serve.deployment(name="retriever")
class Retriever:
    """Args:
        retrieval: a run config's retrieval entry (`biorab.experiment.RetrievalSpec` as JSON).
        dataset / seed / data_dir: as in a run config.
        cache_dir: the cache root (``None``: `biorab.paths.cache_dir`); `hits`: use the hit cache.
    """

    def __init__(self, retrieval: dict[str, Any], *, dataset: str, seed: int = 0, data_dir: str | None = None,
                 cache_dir: str | None = None, hits: bool = True) -> None:
        from biorab.experiment import RetrievalSpec
        from biorab.paths import cache_dir as default_cache

        spec = RetrievalSpec.model_validate(retrieval)
        root = default_cache(cache_dir)
        store = thread_safe(HitStore(default_store_paths(Path(root))[0])) if hits else None
        started = time.monotonic()
        log.info("loading the %s index of the %s/%s corpus (built and cached on first use)",
                 spec.retriever, dataset, spec.testbed)
        self.base = build_testbed_retriever(
            testbed=spec.testbed, dataset=dataset, retriever=spec.retriever, params=spec.params,
            rate=spec.rate, seed=seed, data_dir=data_dir, selection=spec.selection, store=store)
        log.info("index ready in %.1f s", time.monotonic() - started)
        self.by_k: dict[int, CachedRetriever] = {spec.k: self.base}

    def ready(self) -> bool:
        return True

    def search(self, queries: dict[str, str], k: int | None = None) -> dict[str, RetrievedHits]:
        """Query id → its selected hits, with the configured selection or another `k` (same tie rule)."""
        return self._with_k(k).search(queries)

    def _with_k(self, k: int | None) -> CachedRetriever:
        if k is None:
            return self.base
        if k not in self.by_k:  # the same index and hit store, another selection
            self.by_k[k] = CachedRetriever(self.base.retriever, self.base.corpus_digest,
                                           Selection(**{**self.base.selection.model_dump(), "k": k}),
                                           self.base.store)
        return self.by_k[k]
