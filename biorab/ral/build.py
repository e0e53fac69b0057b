"""`build_ral`: one RAL from the blocks a run config declares (dataset, retrieval setting, backend, sampling).

Serve and the training-set builders use it so a served or trained RAL is declared like an evaluated one;
the runner builds the same pieces per cell in its stages (`biorab.runner.stages`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore, HitStore, default_store_paths
from biorab.generation.base import SamplingParams
from biorab.labels import LABELS, RELATIONS
from biorab.ral.core import RAL
from biorab.ral.generator import CachedGenerator
from biorab.ral.retriever import CachedRetriever, build_testbed_retriever


def dataset_labels(dataset: str) -> tuple[str, ...] | None:
    """The closed label set of a dataset (the relation set for triple extraction), if it has one."""
    return LABELS.get(dataset) or RELATIONS.get(dataset)


def build_ral(
    *,
    dataset: str,
    retrieval: Any,
    backend: Any,
    sampling: SamplingParams,
    task: str | None = None,
    parser: str = "robust",
    seed: int = 0,
    data_dir: str | None = None,
    cache_root: str | Path | None = None,
    backend_name: str = "",
) -> RAL:
    """A RAL for `dataset` with one retrieval setting.

    Args:
        dataset: the dataset whose template, label set and (for retrieving settings) testbed corpus are used.
        retrieval: a `biorab.experiment.RetrievalSpec` (testbed ``none``: zero-shot).
        backend: an already built backend (`biorab.generation.build_backend`).
        sampling: decoding parameters.
        task: for bring-your-own datasets without their own template, the task whose template to use.
        parser, seed, data_dir: as in a run config.
        cache_root: where the hit and generation caches live (``None``: no caches).
        backend_name: the backend's registry name, for error messages.
    """
    from biorab.tasks import get_template

    stores = _stores(cache_root)
    template = get_template(dataset, variant=retrieval.template, task=task)
    generator = CachedGenerator(backend, stores[1], name=backend_name)
    retriever: CachedRetriever | None = None
    if retrieval.retrieves:
        from biorab.learn.hit_filter import build_hit_filter

        retriever = build_testbed_retriever(
            testbed=retrieval.testbed, dataset=dataset, retriever=retrieval.retriever,
            params=retrieval.params, rate=retrieval.rate, seed=seed, data_dir=data_dir,
            selection=retrieval.selection,
            store=stores[0], transform=_method_transform(retrieval, generator, sampling),
            hit_filter=build_hit_filter(getattr(retrieval, "filter", None), dataset=dataset))
    return RAL(template=template, generator=generator, sampling=sampling, retriever=retriever, parser=parser,
               labels=dataset_labels(dataset), probe=retrieval.probes)


def _method_transform(retrieval: Any, generator: CachedGenerator, sampling: SamplingParams) -> Any:
    """The corpus method of the retrieval setting, run with this RAL's generator (``None``: no method)."""
    method = getattr(retrieval, "method", "none")
    if method == "none":
        return None
    from biorab.methods.corpus_transform import LiveTransform

    return LiveTransform(method, generator, sampling)


def _stores(cache_root: str | Path | None) -> tuple[HitStore | None, GenerationStore | None]:
    if cache_root is None:
        return None, None
    hits, generations = default_store_paths(Path(cache_root))
    return HitStore(hits), GenerationStore(generations)
