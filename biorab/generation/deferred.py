"""A backend that is built on its first cache miss: finished work starts no engine.

The generation cache is keyed by the backend's `model_digest`, and for the local engines that digest is
known without loading any weights (`biorab.generation.model_info`, the planner's digest, computed by
the backends' own `engine_digest`). A run whose rows are all in the cache then reads them back and never
starts a vLLM engine (~20 s to minutes) or loads transformers weights. When the backend is built after
all, its own digest must equal the planned one, or the keys already used would be wrong: that is a
`BackendError`, never a silent mix.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from biorab.common.errors import BackendError
from biorab.common.records import Generation, Prompt
from biorab.generation.base import SamplingParams
from biorab.generation.capabilities import capabilities_of


@dataclass(frozen=True)
class _Choice:
    """A backend by registry name and params (`biorab.generation.model_info.BackendChoice`)."""

    name: str
    params: Mapping[str, Any]


def planned_digest(name: str, params: Mapping[str, Any]) -> str | None:
    """The backend's `model_digest` without building it, or None where it is not known exactly (an
    unprepared model, an MLflow adapter URI that only the backend downloads) or the backend is cheap to
    build anyway (its `Capabilities.deferred_load` is off)."""
    from biorab.common.model_refs import is_mlflow_uri
    from biorab.generation.model_info import model_info

    if not capabilities_of(name).deferred_load:
        return None
    adapter = params.get("adapter_path") or params.get("adapter")
    if isinstance(adapter, str) and is_mlflow_uri(adapter):
        return None
    info = model_info(_Choice(name, dict(params)))
    return info.digest if info.exact else None


class DeferredBackend:
    """`build()` runs on the first `generate`; `model_digest` is the planned digest meanwhile.

    `load_in_background` starts the build in a thread at once, for a caller that knows a miss will come
    (the Ray LLM actor, while its first batch is still being retrieved and rendered upstream); the first
    use then waits for that build and raises its error, if any, as the build itself would have."""

    def __init__(self, build: Callable[[], Any], digest: str) -> None:
        self._build, self._digest = build, digest
        self._backend: Any = None
        self._loader: threading.Thread | None = None
        self._load_error: BaseException | None = None

    @property
    def built(self) -> bool:
        return self._backend is not None

    def load_in_background(self) -> None:
        """Start building the backend in a daemon thread (no-op once built or started)."""
        if self._backend is not None or self._loader is not None:
            return
        self._loader = threading.Thread(target=self._load, name="biorab-backend-load", daemon=True)
        self._loader.start()

    def _load(self) -> None:
        try:
            self._backend = self._checked_build()
        except BaseException as e:  # raised by the first use (`backend`), in the caller's thread
            self._load_error = e

    def wait_loaded(self) -> None:
        """Wait for a background build to end (errors are kept for `backend` to raise)."""
        if self._loader is not None:
            self._loader.join()

    @property
    def backend(self) -> Any:
        if self._loader is not None:
            self._loader.join()
            self._loader, error, self._load_error = None, self._load_error, None
            if error is not None:
                raise error
        if self._backend is None:
            self._backend = self._checked_build()
        return self._backend

    def _checked_build(self) -> Any:
        backend = self._build()
        if backend.model_digest != self._digest:
            backend.close()
            raise BackendError(f"internal: the built backend's model digest {backend.model_digest[:12]} "
                               f"differs from the planned {self._digest[:12]} "
                               "(biorab.generation.model_info)")
        return backend

    @property
    def model_digest(self) -> str:
        return self._digest

    def __getattr__(self, name: str) -> Any:  # context_length, tokenizer...: the real backend's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.backend, name)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        return list(self.backend.generate(prompts, params))

    def close(self) -> None:
        self.wait_loaded()  # a model still loading would otherwise outlive the close
        if self._backend is not None:
            self._backend.close()


class CacheOnlyBackend:
    """Answers nothing: every prompt it is asked is a miss (an error row, never cached). The Ray
    executor's driver reads the cache through it to find the rows that need no LLM stage at all."""

    MISS = "internal: not in the generation cache"

    def __init__(self, digest: str) -> None:
        self._digest = digest

    @property
    def model_digest(self) -> str:
        return self._digest

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        return [Generation(text="", error=self.MISS) for _ in prompts]

    def close(self) -> None:
        pass


def run_backend(name: str, params: Mapping[str, Any]) -> Any:
    """The backend of a run: where its digest is known without loading it (`planned_digest`), a
    `DeferredBackend` that loads the model on the first cache miss only (a fully cached batch starts no
    engine); else the backend itself."""
    from biorab.generation import build_backend

    def build() -> Any:
        return build_backend(name, dict(params))

    digest = planned_digest(name, params)
    return build() if digest is None else DeferredBackend(build, digest)

