"""The paper's corpus methods as plug-ins of the RAL assembly (`biorab.ral.plugins.corpus_hook_of`)."""

from __future__ import annotations

from typing import Any

from biorab.errors import ConfigError
from biorab.methods.corpus_transform import LiveTransform
from biorab.methods.store import StoredTransform


def corpus_hook(method: str, *, corpus_dir: str | None = None, generator: Any = None,
                sampling: Any = None) -> StoredTransform | LiveTransform:
    """The stored transform of `method` in `corpus_dir` when one was prepared (runs and Serve prepare it
    before indexing, so a stored corpus is reused and never transformed twice), else `method` run live
    with the RAL's own `generator`."""
    if corpus_dir is not None:
        return StoredTransform(corpus_dir)
    if generator is None or sampling is None:
        raise ConfigError(f"retrieval method {method!r} needs its transformed corpus prepared, or a "
                          "generator to transform the testbed with", key="retrieval.method")
    return LiveTransform(method, generator, sampling)
