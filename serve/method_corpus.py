"""The transformed corpus of a served retrieval entry with a ``method`` (Detect-and-Correct, LLM labeling).

Prepared in the driver before the deployments start, exactly as `biorab run` prepares a method cell's
corpus (`biorab.methods.apply.ensure_method_corpus`: keyed by source corpus, method, backend and sampling),
so a corpus an evaluated run already transformed is reused, and the served RAL indexes the same corpus.
"""

from __future__ import annotations

import sys
from pathlib import Path

from serve.config import ServeConfig


def method_corpus(cfg: ServeConfig) -> str | None:
    """The folder of the entry's transformed corpus (``None``: the entry has no method)."""
    if cfg.retrieval.method == "none":
        return None
    from biorab.caches import default_store_paths
    from biorab.methods.apply import ensure_method_corpus
    from biorab.paths import cache_dir

    root = Path(cache_dir(cfg.cache.dir))
    folder = ensure_method_corpus(cfg, cfg.dataset, cfg.retrieval, seed=cfg.seed, data_dir=cfg.data_dir,
                                  generations_store=default_store_paths(root)[1], cache_root=root,
                                  on_transform=_announce(cfg))
    return str(folder)


def _announce(cfg: ServeConfig) -> object:
    def say() -> None:  # printed, not logged: the driver of `biorab serve` configures no logging
        print(f"retrieval method {cfg.retrieval.method}: transforming the {cfg.dataset}/"
              f"{cfg.retrieval.testbed} corpus with the configured backend before serving (stored and "
              "reused afterwards)", file=sys.stderr, flush=True)

    return say
