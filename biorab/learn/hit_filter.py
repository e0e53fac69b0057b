"""The trained awareness encoder as a retrieval filter: keep the retrieved instances it judges helpful.

A hit is kept when its distance ||f(query) - f(item)|| is at most `threshold` (all hits when no threshold),
and kept hits are re-ranked nearest first. Selected in a run config's retrieval entry::

    retrieval:
      - {testbed: counterfactual, rate: 0.8, retriever: bm25, k: 3,
         filter: {encoder: "models:/biorab-awareness-encoder@best", threshold: 1.2}}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import cached_property
from typing import Any

from pydantic import Field

from biorab.common.params import Params
from biorab.common.records import Hit


class HitFilterSpec(Params):
    """`encoder`: a trained encoder folder or ``models:/`` URI; `threshold`: the largest distance kept."""

    encoder: str
    threshold: float | None = Field(default=None, gt=0.0)


class EncoderHitFilter:
    """`biorab.ral.HitFilter` over a trained awareness encoder (loaded on first use); the ``encoder`` kind of
    `biorab.common.registry.HIT_FILTERS`."""

    def __init__(self, spec: HitFilterSpec, *, task: str) -> None:
        from biorab.common.model_refs import resolve_artifact
        from biorab.generation.model_source import folder_fingerprint

        self.spec = spec
        self.task = task
        self.folder = resolve_artifact(spec.encoder, key="retrieval.filter.encoder")
        self.fingerprint = f"encoder:{folder_fingerprint(self.folder)}:threshold:{spec.threshold}"

    @cached_property
    def encoder(self) -> Any:
        from biorab.learn.encoder_model import load_encoder

        return load_encoder(self.folder)

    def apply(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        if not hits:
            return []
        from biorab.learn.encoder_eval import distances
        from biorab.learn.triplets import item_text

        found = distances(
            self.encoder, [query] * len(hits), [item_text(self.task, h.key, h.value) for h in hits]
        )
        order = sorted(range(len(hits)), key=lambda i: (found[i], i))
        kept = [i for i in order if self.spec.threshold is None or found[i] <= self.spec.threshold]
        return [dataclasses.replace(hits[i], rank=rank) for rank, i in enumerate(kept)]


def build_hit_filter(spec: HitFilterSpec | None, *, dataset: str) -> EncoderHitFilter | None:
    """The filter of a retrieval entry (``None`` when it sets none)."""
    if spec is None:
        return None
    from biorab.tasks import get_template

    return EncoderHitFilter(spec, task=get_template(dataset).task)
