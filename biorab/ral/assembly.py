"""The one assembly of a RAL: a declared setting (dataset, retrieval entry, backend, stores) → its parts.

Every entry point builds through here, so a served answer, an evaluated answer and a training prompt are
made of the same parts:

- `assemble_retriever`: the testbed corpus (through the entry's corpus method), its index, the selection,
  the hit filter and the hit cache. The runner's retrieval stage (in-process and as a Ray actor), Serve's
  retriever deployment, the training-set builders and `biorab retrieve` call it.
- `assemble`: the template, label set, parser, probe switch and the generator behind its cache, with the
  retriever above (or one the caller already holds: Serve's ingress gets the retriever deployment's).
  `build_ral` is its `RAL`; Serve's ingress builds one per replica.

Hit filters and corpus methods are plug-ins (`biorab.ral.plugins`): the assembly names them, the
plug-in packages build them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore, HitStore, default_store_paths
from biorab.generation.base import SamplingParams
from biorab.labels import LABELS, RELATIONS
from biorab.ral.core import RAL
from biorab.ral.generator import CachedGenerator
from biorab.ral.plugins import CorpusHook, corpus_hook_of, hit_filter_of
from biorab.ral.retriever import CachedRetriever, build_testbed_retriever
from biorab.retrieval.selection import Selection

#: Indexes already built, shared by the retrievers of one process (`assemble_retriever(indexes=...)`).
IndexMemo = dict[tuple[Any, ...], CachedRetriever]


def dataset_labels(dataset: str) -> tuple[str, ...] | None:
    """The closed label set of a dataset (the relation set for triple extraction), if it has one."""
    return LABELS.get(dataset) or RELATIONS.get(dataset)


@dataclass(frozen=True)
class Stores:
    """The content-keyed caches a RAL reads and writes (``None``: that cache is off)."""

    hits: HitStore | None = None
    generations: GenerationStore | None = None

    @classmethod
    def at(cls, cache_root: str | Path | None) -> Stores:
        """Both stores under `cache_root` (`biorab.caches.default_store_paths`); none without a root."""
        if cache_root is None:
            return cls()
        hits, generations = default_store_paths(Path(cache_root))
        return cls(HitStore(hits), GenerationStore(generations))


@dataclass(frozen=True)
class RALParts:
    """What a RAL is made of; `RAL(**parts.kwargs())` is the RAL."""

    template: Any
    generator: CachedGenerator
    sampling: SamplingParams
    retriever: Any
    parser: str
    labels: tuple[str, ...] | None
    probe: bool

    def kwargs(self) -> dict[str, Any]:
        return {"template": self.template, "generator": self.generator, "sampling": self.sampling,
                "retriever": self.retriever, "parser": self.parser, "labels": self.labels,
                "probe": self.probe}


def assemble_template(dataset: str, retrieval: Any, *, task: str | None = None,
                      labels: tuple[str, ...] | list[str] | None = None) -> Any:
    """The prompt template of `dataset` in the entry's variant (`labels`: another label space)."""
    from biorab.tasks import get_template

    return get_template(dataset, variant=retrieval.template, labels=labels, task=task)


def assemble_retriever(
    retrieval: Any,
    *,
    dataset: str,
    seed: int = 0,
    data_dir: str | Path | None = None,
    store: HitStore | None = None,
    corpus_dir: str | None = None,
    generator: CachedGenerator | None = None,
    sampling: SamplingParams | None = None,
    selection: Selection | None = None,
    pool: list[str] | None = None,
    part: CorpusHook | None = None,
    indexes: IndexMemo | None = None,
) -> CachedRetriever | None:
    """The retriever of a retrieval entry (``None`` for testbed ``none``).

    Args:
        retrieval: a `biorab.experiment.RetrievalSpec` (testbed, rate, retriever and params, selection,
            ``filter``, ``method``).
        dataset, seed, data_dir: as in a run config.
        store: the hit cache (``None``: none).
        corpus_dir: the stored transformed corpus of the entry's method, when it was prepared.
        generator, sampling: run the entry's method live when no `corpus_dir` was prepared.
        selection: another selection than the entry's (the training builders fetch extra candidates).
        pool: the diverse testbed's pool of datasets (``None``: all).
        part: keeps a part of the (transformed) testbed corpus (the encoder's train / held-out sides);
            the part's digest keys its index and hits. Such a retriever is never shared through `indexes`.
        indexes: a memo shared by retrievers of one process: one corpus and index per (testbed, rate,
            dataset, seed, data, retriever params, transformed corpus), whatever the selection and filter.
    """
    if not retrieval.retrieves:
        return None
    chosen = selection or retrieval.selection
    memo = indexes if indexes is not None and part is None else {}
    index_spec = (retrieval.testbed, retrieval.rate, dataset, seed, data_dir, retrieval.retriever,
                  tuple(sorted((k, repr(v)) for k, v in chosen.index_params(retrieval.params).items())),
                  corpus_dir, tuple(pool) if pool else None)
    if index_spec not in memo:
        memo[index_spec] = build_testbed_retriever(
            testbed=retrieval.testbed, dataset=dataset, retriever=retrieval.retriever,
            params=retrieval.params, rate=retrieval.rate, seed=seed,
            data_dir=None if data_dir is None else str(data_dir), selection=chosen, store=store, pool=pool,
            transform=_then(corpus_hook_of(retrieval.method, corpus_dir=corpus_dir, generator=generator,
                                           sampling=sampling), part))
    built = memo[index_spec]
    return CachedRetriever(built.retriever, built.corpus_digest, chosen, store,
                           hit_filter_of(retrieval.filter, dataset=dataset))


def _then(first: CorpusHook | None, second: CorpusHook | None) -> CorpusHook | None:
    """One corpus hook running `first`, then `second` (either may be absent)."""
    if first is None or second is None:
        return first or second

    def both(corpus: Any, ledger: Any) -> Any:
        return second(first(corpus, ledger), ledger)

    return both


def assemble(
    *,
    dataset: str,
    retrieval: Any,
    backend: Any,
    sampling: SamplingParams,
    stores: Stores | None = None,
    task: str | None = None,
    parser: str = "robust",
    seed: int = 0,
    data_dir: str | Path | None = None,
    corpus_dir: str | None = None,
    labels: tuple[str, ...] | list[str] | None = None,
    backend_name: str = "",
    retriever: Any = None,
) -> RALParts:
    """The parts of a RAL for `dataset` with one retrieval entry.

    Args:
        dataset: the dataset whose template, label set and (for retrieving entries) testbed corpus are used.
        retrieval: a `biorab.experiment.RetrievalSpec` (testbed ``none``: zero-shot).
        backend: an already built backend (`biorab.generation.build_backend`), or a client of one.
        sampling: decoding parameters.
        stores: the hit and generation caches (``None``: none).
        task: for bring-your-own datasets without their own template, the task whose template to use.
        parser, seed, data_dir: as in a run config; corpus_dir: the entry's prepared method corpus.
        labels: another label space than the dataset's (Serve's ``labels:``).
        backend_name: the backend's registry name, for error messages.
        retriever: a retriever already assembled elsewhere (Serve's retriever deployment); ``None``: build
            it here with `assemble_retriever`.
    """
    stores = stores or Stores()
    template = assemble_template(dataset, retrieval, task=task, labels=labels)
    generator = CachedGenerator(backend, stores.generations, name=backend_name)
    if retriever is None:
        retriever = assemble_retriever(retrieval, dataset=dataset, seed=seed, data_dir=data_dir,
                                       store=stores.hits, corpus_dir=corpus_dir, generator=generator,
                                       sampling=sampling)
    chosen_labels = tuple(labels) if labels else dataset_labels(dataset)
    return RALParts(template=template, generator=generator, sampling=sampling, retriever=retriever,
                    parser=parser, labels=chosen_labels, probe=retrieval.probes)


def build_ral(*, cache_root: str | Path | None = None, **kwargs: Any) -> RAL:
    """`assemble(**kwargs)` as a `RAL`, its caches under `cache_root` (``None``: no caches)."""
    if "stores" not in kwargs:
        kwargs["stores"] = Stores.at(cache_root)
    return RAL(**assemble(**kwargs).kwargs())

