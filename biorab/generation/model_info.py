"""What a backend's model is without loading it: the generation-cache digest the backend will use, and
where its tokenizer lives (for counting prompt tokens).

The digest is computed by the backends' own functions from the model spec (for a backend with
`Capabilities.local_weights`, ``transformers``/``vllm``: `weights_digest` of the resolved source, marked by
`engine_digest`; for the others, ``fake``/``openai``: their class's ``params_digest``), so the digest
planned by `biorab plan`, tracked with a run and checked by the deferred backend equals the keys a run
writes. One approximation: a known model (``smollm2``) that has not been prepared yet has no source
digest; its digest is then estimated (``exact=False``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from biorab.common.errors import BioRABError
from biorab.generation.base import stable_digest


class BackendChoice(Protocol):
    """A backend as a config names it (`biorab.experiment.BackendSpec`): its registry name and params."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class ModelInfo:
    """A model's cache digest (``exact``: equal to the real backend's) and where its tokenizer lives."""

    digest: str
    exact: bool
    tokenizer_location: str | None


def model_info(backend: BackendChoice) -> ModelInfo:
    """The digest and tokenizer location of `backend`, computed without loading any weights."""
    from biorab.common.build import build_params
    from biorab.common.registry import BACKENDS
    from biorab.generation.capabilities import capabilities_of

    params: Any = build_params(BACKENDS, backend.name, backend.params)
    if capabilities_of(backend.name).local_weights:
        return _weights_info(backend.name, params)
    # no weights here: the backend class's own digest of its params (it is light to import)
    return ModelInfo(BACKENDS.get(backend.name).params_digest(params), True, None)


def _weights_info(engine: str, params: Any) -> ModelInfo:
    from biorab.generation.dtype import resolve_dtype
    from biorab.generation.model_source import engine_digest, resolve_model, weights_digest

    try:
        source = resolve_model(params.model, revision=params.revision, cache_dir=params.cache_dir,
                               auto_prepare=False)
    except BioRABError:  # a known model not prepared yet: no source digest to hash
        return ModelInfo(stable_digest({"estimated": params.model_dump(mode="json")}), False, None)
    # the backend's own dtype rule: transformers resolves ``auto`` (and keys the resolved dtype)
    dtype = resolve_dtype(params.dtype, params.device) if engine == "transformers" else params.dtype
    weights = weights_digest(source, params.adapter_path, dtype)
    return ModelInfo(engine_digest(weights, engine, params), True, source.location)
