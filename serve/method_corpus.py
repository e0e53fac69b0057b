"""The transformed corpus of a served retrieval entry with a ``method`` (Detect-and-Correct, LLM labeling).

Prepared in the driver before the deployments start, exactly as `biorab run` prepares a method cell's
corpus (`biorab.methods.apply.ensure_method_corpus`: keyed by source corpus, method, backend and sampling),
so a corpus an evaluated run already transformed is reused, and the served RAL indexes the same corpus.
"""

from __future__ import annotations

import logging
from pathlib import Path

from serve.config import ServeConfig

log = logging.getLogger(__name__)


def method_corpus(cfg: ServeConfig) -> str | None:
    """The folder of the entry's transformed corpus (``None``: the entry has no method)."""
    if cfg.retrieval.method == "none":
        return None
    from biorab.caches import default_store_paths
    from biorab.methods.apply import ensure_method_corpus
    from biorab.paths import cache_dir

    root = Path(cache_dir(cfg.cache.dir))
    log.warning("retrieval method %s: preparing the transformed %s/%s corpus (reused once stored)",
                cfg.retrieval.method, cfg.dataset, cfg.retrieval.testbed)
    folder = ensure_method_corpus(cfg, cfg.dataset, cfg.retrieval, seed=cfg.seed, data_dir=cfg.data_dir,
                                  generations_store=default_store_paths(root)[1], cache_root=root)
    return str(folder)
