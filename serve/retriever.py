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
from biorab.ral import CachedRetriever, RetrievedHits, assemble_retriever
from serve.stores import thread_safe

log = logging.getLogger("ray.serve")


@serve.deployment(name="retriever")
class Retriever:
    """Args:
        retrieval: a run config's retrieval entry (`biorab.experiment.RetrievalSpec` as JSON); its
            ``filter`` and ``method`` apply as in `biorab run` (the same `biorab.ral.assemble_retriever`).
        dataset / seed / data_dir: as in a run config.
        cache_dir: the cache root (``None``: `biorab.paths.cache_dir`); `hits`: use the hit cache.
        corpus_dir: the entry's transformed corpus (`serve.method_corpus`), when it has a ``method``.
    """

    def __init__(self, retrieval: dict[str, Any], *, dataset: str, seed: int = 0, data_dir: str | None = None,
                 cache_dir: str | None = None, hits: bool = True, corpus_dir: str | None = None) -> None:
        from biorab.experiment import RetrievalSpec
        from biorab.paths import cache_dir as default_cache

        spec = RetrievalSpec.model_validate(retrieval)
        root = default_cache(cache_dir)
        store = thread_safe(HitStore(default_store_paths(Path(root))[0])) if hits else None
        started = time.monotonic()
        log.info("loading the %s index of the %s/%s corpus (built and cached on first use)",
                 spec.retriever, dataset, spec.testbed)
        built = assemble_retriever(spec, dataset=dataset, seed=seed, data_dir=data_dir, store=store,
                                   corpus_dir=corpus_dir)
        assert built is not None  # the app deploys a retriever only for retrieving entries
        self.base: CachedRetriever = built
        log.info("index ready in %.1f s", time.monotonic() - started)

    def ready(self) -> bool:
        return True

    def search(self, queries: dict[str, str], k: int | None = None) -> dict[str, RetrievedHits]:
        """Query id → its selected hits, with the configured selection or another `k` (same tie rule and
        filter)."""
        return self.base.search(queries, k)
