"""The two plug-in points of the RAL assembly: hit filters and corpus methods.

The core defines what a plug-in looks like and where it is found; the plug-ins (the trained awareness
encoder in `biorab.learn`, Detect-and-Correct and LLM labeling in `biorab.methods`) register into these
registries by name (`biorab.registry` lists them lazily), so `biorab.ral` imports neither.

- A **hit filter** factory ``(spec, *, dataset) -> HitFilter`` turns a retrieval entry's ``filter:`` block
  into an object that keeps (and may re-rank) the selected hits of a query.
- A **corpus method** factory ``(method, *, corpus_dir, generator, sampling) -> CorpusHook`` turns a
  retrieval entry's ``method:`` into the hook that replaces the testbed corpus before it is indexed: the
  stored transform in `corpus_dir` when one was prepared (runs, Serve), else a live transform run with the
  RAL's own generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from biorab.records import Hit
from biorab.registry import CORPUS_METHODS, HIT_FILTERS


class HitFilter(Protocol):
    """Keeps (and may re-rank) the selected hits of a query; `fingerprint` names it in hit cache keys."""

    fingerprint: str

    def apply(self, query: str, hits: Sequence[Hit]) -> list[Hit]: ...


class CorpusHook(Protocol):
    """Replaces a testbed corpus (given with its corruption ledger) before it is indexed."""

    def __call__(self, corpus: Any, ledger: Any) -> Any: ...


def hit_filter_of(spec: Any, *, dataset: str) -> HitFilter | None:
    """The filter a retrieval entry's ``filter:`` block declares (``None`` when it declares none)."""
    if spec is None:
        return None
    factory = HIT_FILTERS.get(str(getattr(spec, "kind", "encoder")))
    found: HitFilter | None = factory(spec, dataset=dataset)
    return found


def corpus_hook_of(method: str, *, corpus_dir: str | None = None, generator: Any = None,
                   sampling: Any = None) -> CorpusHook | None:
    """The corpus hook of a retrieval entry's ``method:`` (``None`` for ``none``: index the testbed as is)."""
    if method == "none":
        return None
    factory = CORPUS_METHODS.get(method)
    hook: CorpusHook = factory(method, corpus_dir=corpus_dir, generator=generator, sampling=sampling)
    return hook
