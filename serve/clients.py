"""Thin clients that let the RAL core run unchanged in the ingress: a retriever and a backend whose calls
go to the retriever and generator deployments.

The ingress runs `biorab.ral.RAL.answer` in a worker thread (the core is synchronous), so these block on
``DeploymentResponse.result()``, which Serve allows outside the replica's event loop, and only until the
request's deadline (`serve.deadlines`): a call past it, or of a client that went away, is cancelled. The
clients live as long as the replica's RAL; each call is timed into the `Timings` of the request the
calling thread serves (`request_timings`, a context variable: one per worker thread's request).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from biorab.common.records import Generation, Prompt
from biorab.generation.base import SamplingParams
from biorab.ral import RetrievedHits
from serve.admission import Admission, Refused
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


_CURRENT: ContextVar[Timings | None] = ContextVar("serve_request_timings", default=None)


@contextmanager
def request_timings() -> Iterator[Timings]:
    """The `Timings` the clients add this request's calls to, while the block runs."""
    timings = Timings()
    token = _CURRENT.set(timings)
    try:
        yield timings
    finally:
        _CURRENT.reset(token)


def _record(what: str, started: float) -> None:
    timings = _CURRENT.get()
    if timings is not None:
        timings.add(what, time.perf_counter() - started)


def call(admission: Admission, send: Callable[[], Any]) -> Any:
    """`send()`'s response, waited for in the request's scope, holding a slot of `admission`; Serve's
    refusals become `Refused` naming the deployment and the path."""
    from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError

    with admission.slot():
        try:
            return wait_for(send())
        except BackPressureError as e:
            raise Refused(admission.deployment, "serve-backpressure", e.message) from e
        except DeploymentUnavailableError as e:
            raise Refused(admission.deployment, "unavailable", e.message) from e


class RetrieverClient:
    """`CachedRetriever.search` over the retriever deployment (`k`: the request's, else the entry's)."""

    def __init__(self, handle: Any, admission: Admission | None = None) -> None:
        self.handle, self.admission = handle, admission or Admission("retriever", None)

    def search(self, queries: Mapping[str, str], k: int | None = None) -> dict[str, RetrievedHits]:
        started = time.perf_counter()
        try:
            found: dict[str, RetrievedHits] = call(self.admission,
                                                   lambda: self.handle.search.remote(dict(queries), k))
        finally:
            _record("retrieval", started)
        return found


class GeneratorClient:
    """A `biorab.generation.base.Backend` whose generations come from the generator deployment."""

    def __init__(self, handle: Any, model_digest: str, admission: Admission | None = None, *,
                 adapter: str | None = None) -> None:
        self.handle, self._digest, self.adapter = handle, model_digest, adapter
        self.admission = admission or Admission("generator", None)

    @property
    def model_digest(self) -> str:
        return self._digest

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        started = time.perf_counter()
        try:
            gens: list[Generation] = call(
                self.admission,
                lambda: self.handle.generate.remote(list(prompts), params, ticket(), self.adapter))
        finally:
            _record("generation", started)
        return gens

    def close(self) -> None:
        """The backend lives in the generator deployment; nothing to free here."""
