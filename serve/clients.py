"""Thin clients that let the RAL core run unchanged in the ingress: a retriever and a backend whose calls
go to the retriever and generator deployments.

The ingress runs `biorab.ral.RAL.answer` in a worker thread (the core is synchronous), so these block on
``DeploymentResponse.result()``, which Serve allows outside the replica's event loop, and only until the
request's deadline (`serve.deadlines`): a call past it, or of a client that went away, is cancelled. Each
client times its calls into a `Timings` of the request it serves.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from biorab.generation.base import SamplingParams
from biorab.ral import RetrievedHits
from biorab.records import Generation, Prompt
from serve.deadlines import ticket, wait_for


@dataclass
class Timings:
    """Seconds one request spent waiting on each deployment."""

    retrieval_s: float = 0.0
    generation_s: float = 0.0
    calls: dict[str, int] = field(default_factory=dict)

    def add(self, what: str, seconds: float) -> None:
        setattr(self, f"{what}_s", getattr(self, f"{what}_s") + seconds)
        self.calls[what] = self.calls.get(what, 0) + 1


class RetrieverClient:
    """`CachedRetriever.search` over the retriever deployment, with the request's `k`."""

    def __init__(self, handle: Any, timings: Timings, k: int | None = None) -> None:
        self.handle, self.timings, self.k = handle, timings, k

    def search(self, queries: Mapping[str, str]) -> dict[str, RetrievedHits]:
        started = time.perf_counter()
        try:
            found: dict[str, RetrievedHits] = wait_for(self.handle.search.remote(dict(queries), self.k))
        finally:
            self.timings.add("retrieval", time.perf_counter() - started)
        return found


class GeneratorClient:
    """A `biorab.generation.base.Backend` whose generations come from the generator deployment."""

    def __init__(self, handle: Any, timings: Timings, model_digest: str) -> None:
        self.handle, self.timings, self._digest = handle, timings, model_digest

    @property
    def model_digest(self) -> str:
        return self._digest

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        started = time.perf_counter()
        try:
            gens: list[Generation] = wait_for(self.handle.generate.remote(list(prompts), params, ticket()))
        finally:
            self.timings.add("generation", time.perf_counter() - started)
        return gens

    def close(self) -> None:
        """The backend lives in the generator deployment; nothing to free here."""
