"""The two plug-in points of the RAL assembly: hit filters and corpus methods.

The core defines what a plug-in looks like and where it is found; the plug-ins (the trained awareness
encoder in `biorab.learn`, Detect-and-Correct and LLM labeling in `biorab.methods`) register into these
registries by name (`biorab.common.registry` lists them lazily), so `biorab.ral` imports neither.

- A **hit filter** factory ``(spec, *, dataset) -> HitFilter`` turns a retrieval entry's ``filter:`` block
  into an object that keeps (and may re-rank) the selected hits of a query.
- A **corpus method** (`CorpusMethod`) does two things for a retrieval entry's ``method:``: `prepare`
  transforms the testbed corpus and stores it (the assembly asks it, through `MethodCorpora`, when a caller
  gives one: runs, Serve), and `hook` returns what replaces the testbed corpus before it is indexed: the
  stored transform in `corpus_dir` when one was prepared, else a live transform run with the RAL's own
  generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from biorab.common.records import Hit
from biorab.common.registry import CORPUS_METHODS, HIT_FILTERS

if TYPE_CHECKING:
    from biorab.ral.parts.method_corpora import MethodCorpora, MethodSetting


class HitFilter(Protocol):
    """Keeps (and may re-rank) the selected hits of a query; `fingerprint` names it in hit cache keys."""

    fingerprint: str

    def apply(self, query: str, hits: Sequence[Hit]) -> list[Hit]: ...


class CorpusHook(Protocol):
    """Replaces a testbed corpus (given with its corruption ledger) before it is indexed."""

    def __call__(self, corpus: Any, ledger: Any) -> Any: ...


class CorpusMethod(Protocol):
    """A corpus method plug-in (registered by name in `biorab.common.registry.CORPUS_METHODS`)."""

    def prepare(self, setting: MethodSetting, methods: MethodCorpora) -> str | Path:
        """Transform `setting`'s testbed corpus with `methods`' backend unless stored; its folder."""
        ...

    def testbeds(self, method: str) -> tuple[str, ...]:
        """The testbeds `method` applies to (a retrieval entry with another is refused when validated)."""
        ...

    def hook(self, method: str, *, corpus_dir: str | None = None, generator: Any = None,
             sampling: Any = None) -> CorpusHook:
        """The hook replacing the testbed corpus: the stored transform in `corpus_dir`, else a live one."""
        ...


def corpus_method_of(method: str) -> CorpusMethod:
    """The plug-in of a retrieval entry's ``method:`` (not ``none``)."""
    found: CorpusMethod = CORPUS_METHODS.get(method)
    return found


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
    plugin = corpus_method_of(method)
    return plugin.hook(method, corpus_dir=corpus_dir, generator=generator, sampling=sampling)
