"""The retriever deployment: one testbed corpus indexed once, searched through the hit cache.

The index comes from the content-keyed index cache (`biorab.retrieval`: keyed by retriever and corpus
digest); the first replica that finds none builds it and says so in the replica log.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from ray import serve

from biorab.caches import HitStore, default_store_paths
from biorab.ral import CachedRetriever, RALParts, RetrievedHits
from serve.stores import thread_safe

log = logging.getLogger("ray.serve")


@serve.deployment(name="retriever")
class Retriever:
    """Args:
        parts: the served RAL's parts (`serve.answering.serve_parts`, with the entry's transformed corpus
            when it has a ``method``); its ``filter`` and ``method`` apply as in `biorab run`, whose cells
            build their retriever from the same `biorab.ral.RALParts.retriever`.
        cache_dir: the cache root (``None``: `biorab.common.paths.cache_dir`); `hits`: use the hit cache.
    """

    def __init__(self, parts: RALParts, *, cache_dir: str | None = None, hits: bool = True) -> None:
        from biorab.common.paths import cache_dir as default_cache

        root = default_cache(cache_dir)
        store = thread_safe(HitStore(default_store_paths(Path(root))[0])) if hits else None
        started = time.monotonic()
        log.info("loading the %s index of the %s/%s corpus (built and cached on first use)",
                 parts.retrieval.retriever, parts.dataset, parts.retrieval.testbed)
        built = parts.retriever(store=store)
        assert built is not None  # the app deploys a retriever only for retrieving entries
        self.base: CachedRetriever = built
        log.info("index ready in %.1f s", time.monotonic() - started)

    def ready(self) -> bool:
        return True

    def search(self, queries: dict[str, str], k: int | None = None) -> dict[str, RetrievedHits]:
        """Query id → its selected hits, with the configured selection or another `k` (same tie rule and
        filter)."""
        return self.base.search(queries, k)
