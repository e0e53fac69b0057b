"""`CachedGenerator`: a backend behind the content-keyed generation cache.

Identical prompts in a call are generated once (the later copies count as served from cache); cached
generations are read back; a backend error fails only the prompts of that call (an errored `Generation`,
never cached, so the next run retries them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from biorab.caches import GenerationStore, generation_key
from biorab.common.errors import BackendError
from biorab.common.records import Generation, Prompt
from biorab.generation.base import SamplingParams
from biorab.generation.deferred import run_backend
from biorab.ral.specs.answer import GenerationResult


class CachedGenerator:
    """Generates prompts with `backend`, through `store` when one is given (``None``: no cache)."""

    def __init__(self, backend: Any, store: GenerationStore | None = None, *, name: str = "") -> None:
        self.backend = backend
        self.store = store
        self.name = name or type(backend).__name__

    @property
    def model_digest(self) -> str:
        return str(self.backend.model_digest)

    def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams) -> list[GenerationResult]:
        """One `GenerationResult` per prompt, in order."""
        keys, cached = self.lookup(prompts, sampling)
        todo = {k: p for k, p in zip(keys, prompts, strict=True) if k not in cached}
        fresh = self._generate(list(todo.values()), list(todo), sampling)
        self.store_fresh(fresh)
        results = []
        for k in keys:
            if k in cached:
                results.append(GenerationResult(cached[k], k, True))
            else:  # a prompt repeated in this call was generated once: its later copies are served, not made
                results.append(GenerationResult(fresh[k], k, False))
                if not fresh[k].error:
                    cached[k] = fresh[k]
        return results

    def lookup(self, prompts: Sequence[Prompt], sampling: SamplingParams
               ) -> tuple[list[str], dict[str, Generation]]:
        """(the cache key of each prompt, in order; the cached generations by key). An engine that generates
        outside this class (Ray's processor) keys and reads the cache here too."""
        digest = self.model_digest
        keys = [generation_key(digest, p, sampling) for p in prompts]
        return keys, (self.store.get_many(keys) if self.store is not None else {})

    def store_fresh(self, fresh: Mapping[str, Generation]) -> None:
        """Store freshly made generations by key (the store refuses errored ones: they are retried)."""
        if self.store is not None:
            self.store.put_many(fresh)

    def _generate(
        self, prompts: Sequence[Prompt], keys: Sequence[str], sampling: SamplingParams
    ) -> dict[str, Generation]:
        if not prompts:
            return {}
        try:
            gens = self.backend.generate(prompts, sampling)
        except BackendError as e:  # the whole call failed after the backend's own retries
            gens = [failed_generation(f"{type(e).__name__}: {e}") for _ in prompts]
        if len(gens) != len(prompts):
            raise BackendError(f"backend {self.name!r} returned {len(gens)} generations "
                               f"for {len(prompts)} prompts")
        return dict(zip(keys, gens, strict=True))

    def close(self) -> None:
        self.backend.close()


def failed_generation(error: str) -> Generation:
    """The generation of a request that failed: no text, the error recorded (never cached, so the next run
    retries it)."""
    return Generation(text="", error=error)


def run_generator(name: str, params: Mapping[str, Any], generations_store: str | Path,
                  backend: Any = None) -> CachedGenerator:
    """A run's backend (`backend`: one already built; ``None``: `biorab.generation.deferred.run_backend`,
    loaded on its first cache miss where that pays) behind the generation store at `generations_store`."""
    return CachedGenerator(run_backend(name, params) if backend is None else backend,
                           GenerationStore(generations_store), name=name)
