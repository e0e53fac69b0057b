"""The one assembly of a RAL: a declared setting (dataset, retrieval entry, task, parser) → its parts.

Every entry point asks `assemble` once for its setting and builds from the `RALParts` it gets, so a served
answer, an evaluated answer and a training prompt are made of the same parts:

- `biorab run`: `assemble_cells`, once per cell on the driver; the stages (in-process or in Ray's
  processes) build the part each needs where it runs: the retrieval stage its retriever, the render stage
  its template, the parse stage reads the parser and labels;
- Serve: the ingress (its RAL, `RALParts.ral`) and the retriever deployment (`RALParts.retriever`), once
  per replica;
- training (`biorab.learn.instruction_set`) and `biorab retrieve`: the template, the testbed corpus and the
  retriever.

The input is typed: a `biorab.ral.specs.retrieval_spec.RetrievalSpec` (a run's retrieval entry, Serve's block,
a training source's fields, `biorab retrieve`'s flags). An entry with a corpus method gets its transformed
corpus here, from the caller's `MethodCorpora` (`assemble(..., methods=)`), prepared once per setting and
stored; its retriever then indexes the stored corpus. Without `methods` (and no `corpus_dir`), the RAL
transforms the corpus live with its own generator.

`RALParts` is small and picklable: nothing is built until a part is asked for (but a method corpus, which
`assemble` prepares), so the driver can assemble every cell and ship the parts to the processes that build
them. The retriever (the testbed corpus through the entry's corpus method, its index, selection, hit filter
and hit cache) takes the resources of the process that builds it (its hit store, a memo of the indexes it
already holds); the testbed corpus is built once per process (`biorab.ral.parts.testbeds.testbed_corpus`).

Hit filters and corpus methods are plug-ins (`biorab.ral.parts.plugins`): the assembly names them, the
plug-in packages build them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore, HitStore, default_store_paths
from biorab.common.labels import dataset_labels
from biorab.corpora.corpus import Corpus, Ledger
from biorab.generation.base import SamplingParams
from biorab.ral.parts.core import RAL
from biorab.ral.parts.generator import CachedGenerator
from biorab.ral.parts.method_corpora import MethodCorpora, MethodSetting
from biorab.ral.parts.plugins import CorpusHook, corpus_hook_of, hit_filter_of
from biorab.ral.parts.retriever import CachedRetriever, build_testbed_retriever
from biorab.ral.parts.testbeds import testbed_corpus
from biorab.ral.specs.evidence_order import MISLEADING_ORDERS, HitOrder, misleading_ids
from biorab.ral.specs.retrieval_spec import RetrievalSpec
from biorab.ral.specs.stage_plan import StagePlan
from biorab.retrieval.selection import Selection
from biorab.tasks.template import Template

#: Indexes already built, shared by the retrievers of one process (`RALParts.retriever(indexes=...)`).
IndexMemo = dict[tuple[Any, ...], CachedRetriever]


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
    """What a RAL of one setting is made of, each part built on first use (see the module docstring).

    Attributes:
        dataset: the dataset whose template, label set and (for retrieving entries) testbed corpus are used.
        retrieval: the retrieval setting (testbed ``none``: zero-shot).
        task: for bring-your-own datasets without their own template, the task whose template to use.
        parser, seed, data_dir: as in a run config; corpus_dir: the entry's prepared method corpus
            (`assemble` sets it when given `methods`).
        label_space: another label space than the dataset's (Serve's ``labels:``); ``None``: the dataset's.
    """

    dataset: str
    retrieval: RetrievalSpec
    task: str | None = None
    parser: str = "robust"
    seed: int = 0
    data_dir: str | None = None
    corpus_dir: str | None = None
    label_space: tuple[str, ...] | None = None

    @property
    def labels(self) -> tuple[str, ...] | None:
        """The closed label set answers are scored over (``None``: an open task)."""
        return self.label_space or dataset_labels(self.dataset)

    @property
    def probe(self) -> bool:
        """Whether the awareness probe asks about the top hit."""
        return bool(self.retrieval.probes)

    @cached_property
    def template(self) -> Template:
        """The prompt template of the dataset in the entry's variant (and label space)."""
        from biorab.tasks import get_template

        return get_template(self.dataset, variant=self.retrieval.template, labels=self.label_space,
                            task=self.task)

    def testbed(self, pool: list[str] | None = None) -> tuple[Corpus, Ledger]:
        """The entry's testbed corpus and its ledger, before any corpus method (built once per process:
        `biorab.ral.parts.testbeds.testbed_corpus`; `pool`: the diverse testbed's datasets, ``None``: all)."""
        r = self.retrieval
        return testbed_corpus(r.testbed, self.dataset, rate=r.rate, seed=self.seed, data_dir=self.data_dir,
                              pool=pool)

    def retriever(
        self,
        *,
        store: HitStore | None = None,
        generator: CachedGenerator | None = None,
        sampling: SamplingParams | None = None,
        selection: Selection | None = None,
        pool: list[str] | None = None,
        part: CorpusHook | None = None,
        indexes: IndexMemo | None = None,
    ) -> CachedRetriever | None:
        """The entry's retriever (``None`` for testbed ``none``), built now.

        Args:
            store: the hit cache (``None``: none).
            generator, sampling: run the entry's corpus method live when no `corpus_dir` was prepared.
            selection: another selection than the entry's (the training builders fetch extra candidates).
            pool: the diverse testbed's pool of datasets (``None``: all).
            part: keeps a part of the (transformed) testbed corpus (the encoder's train / held-out sides);
                the part's digest keys its index and hits. Such a retriever is never shared through
                `indexes`.
            indexes: a memo shared by the retrievers of one process: one corpus and index per (testbed,
                rate, dataset, seed, data, retriever params, transformed corpus), whatever the selection
                and filter.
        """
        r = self.retrieval
        if not r.retrieves:
            return None
        chosen = selection or r.selection
        memo = indexes if indexes is not None and part is None else {}
        index_spec = (r.testbed, r.rate, self.dataset, self.seed, self.data_dir, r.retriever,
                      tuple(sorted((k, repr(v)) for k, v in chosen.index_params(r.params).items())),
                      self.corpus_dir, tuple(pool) if pool else None)
        if index_spec not in memo:
            memo[index_spec] = build_testbed_retriever(
                testbed=r.testbed, dataset=self.dataset, retriever=r.retriever, params=r.params, rate=r.rate,
                seed=self.seed, data_dir=self.data_dir, selection=chosen, store=store, pool=pool,
                transform=_then(corpus_hook_of(r.method, corpus_dir=self.corpus_dir, generator=generator,
                                               sampling=sampling), part))
        built = memo[index_spec]
        return CachedRetriever(built.retriever, built.corpus_digest, chosen, store,
                               hit_filter_of(r.filter, dataset=self.dataset), self.hit_order(pool))

    def hit_order(self, pool: list[str] | None = None) -> HitOrder | None:
        """The entry's evidence order (``None``: as retrieved), with its testbed's wrong labels."""
        order = self.retrieval.order
        if order == "retrieved":
            return None
        wrong = misleading_ids(self.testbed(pool)[1].entries) if order in MISLEADING_ORDERS else {}
        return HitOrder(order, wrong, self.seed)

    def ral(self, *, backend: Any, sampling: SamplingParams, stores: Stores | None = None,
            retriever: Any = None, backend_name: str = "") -> RAL:
        """The RAL of these parts on `backend` (an already built backend, or a client of one).

        Args:
            sampling: decoding parameters.
            stores: the hit and generation caches (``None``: none).
            retriever: a retriever built elsewhere from these parts (Serve's retriever deployment, through
                its client); ``None``: built here.
            backend_name: the backend's registry name, for error messages.
        """
        stores = stores or Stores()
        generator = CachedGenerator(backend, stores.generations, name=backend_name)
        if retriever is None:
            retriever = self.retriever(store=stores.hits, generator=generator, sampling=sampling)
        return RAL(template=self.template, generator=generator, sampling=sampling, retriever=retriever,
                   parser=self.parser, labels=self.labels, probe=self.probe)

    def __getstate__(self) -> dict[str, Any]:
        # Shipped unbuilt: the process that uses a part builds it.
        return {k: v for k, v in self.__dict__.items() if k != "template"}


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
    retrieval: RetrievalSpec,
    task: str | None = None,
    parser: str = "robust",
    seed: int = 0,
    data_dir: str | Path | None = None,
    corpus_dir: str | None = None,
    labels: tuple[str, ...] | list[str] | None = None,
    methods: MethodCorpora | None = None,
) -> RALParts:
    """The parts of a RAL for `dataset` with one retrieval entry (fields: `RALParts`; `labels`: another
    label space than the dataset's). Nothing is built yet, but the entry's method corpus when `methods` is
    given (and no `corpus_dir`): prepared now, once per setting, and stored (`MethodCorpora.folder`)."""
    parts = RALParts(dataset=dataset, retrieval=retrieval, task=task, parser=parser, seed=seed,
                     data_dir=None if data_dir is None else str(data_dir), corpus_dir=corpus_dir,
                     label_space=tuple(labels) if labels else None)
    if methods is not None and retrieval.method != "none" and corpus_dir is None:
        setting = MethodSetting(testbed=retrieval.testbed, rate=retrieval.rate, method=retrieval.method,
                                dataset=dataset, seed=seed, data_dir=parts.data_dir)
        return replace(parts, corpus_dir=methods.folder(setting))
    return parts


def assemble_cells(plans: Mapping[str, StagePlan], *, methods: MethodCorpora | None = None
                   ) -> dict[str, RALParts]:
    """`assemble` once for each cell whose rows the stages render or retrieve (dataset slices; other cells
    carry their prompts), keyed by cell id; `methods`: what prepares the corpora of cells with a method."""
    parts: dict[str, RALParts] = {}
    for cell_id, plan in plans.items():
        if plan.renders or plan.retrieves:
            dataset, retrieval = plan.dataset_setting()
            parts[cell_id] = assemble(dataset=dataset, retrieval=retrieval, task=plan.task,
                                      parser=plan.parser, seed=plan.seed, data_dir=plan.data_dir,
                                      methods=methods)
    return parts


def build_ral(*, dataset: str, retrieval: RetrievalSpec, backend: Any, sampling: SamplingParams,
              cache_root: str | Path | None = None, stores: Stores | None = None, backend_name: str = "",
              retriever: Any = None, **setting: Any) -> RAL:
    """`assemble(dataset=..., retrieval=..., **setting).ral(...)`, its caches under `cache_root` (``None``:
    no caches) unless `stores` are given."""
    return assemble(dataset=dataset, retrieval=retrieval, **setting).ral(
        backend=backend, sampling=sampling, stores=stores if stores is not None else Stores.at(cache_root),
        retriever=retriever, backend_name=backend_name)
