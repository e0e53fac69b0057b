"""What `biorab plan` knows about a model without loading it: the generation-cache digest its backend will
use, and a tokenizer to count prompt tokens where one is on this machine.

The digest is computed by the backends' own functions from the model spec (`weights_digest` of the
resolved source for ``transformers``/``vllm``, marked by `engine_digest`; the params digest for
``fake``/``openai``), so planned generation keys equal the keys a run writes. One approximation: a known
model (``smollm2``) that has not been prepared yet has no source digest; its digest is then estimated
(``exact=False``) and every prompt of that model counts as new.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.errors import BioRABError
from biorab.experiment import BackendSpec
from biorab.generation.base import stable_digest

#: Characters per token when no tokenizer is available (English/biomedical text with BPE tokenizers).
CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class ModelInfo:
    """A model's cache digest (``exact``: equal to the real backend's) and where its tokenizer lives."""

    digest: str
    exact: bool
    tokenizer_location: str | None


def model_info(backend: BackendSpec) -> ModelInfo:
    """The digest and tokenizer location of `backend`, computed without loading any weights."""
    from biorab.build import build_params
    from biorab.registry import BACKENDS

    params: Any = build_params(BACKENDS, backend.name, backend.params)
    if backend.name == "fake":
        return ModelInfo(stable_digest({"backend": "fake", **params.model_dump(mode="json")}), True, None)
    if backend.name == "openai":
        spec = {"backend": "openai", "base_url": params.base_url, "model": params.model,
                "revision": params.model_revision, "chat": params.chat}
        return ModelInfo(stable_digest(spec), True, None)
    return _weights_info(backend.name, params)


def _weights_info(engine: str, params: Any) -> ModelInfo:
    from biorab.generation.hf_dtype import resolve_dtype
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


class TokenCounter:
    """Counts tokens with the model's tokenizer when it can be loaded offline, else estimates from length."""

    def __init__(self, location: str | None) -> None:
        self.tokenizer = _load_tokenizer(location) if location else None

    @property
    def exact(self) -> bool:
        return self.tokenizer is not None

    def count(self, texts: list[str]) -> list[int]:
        if self.tokenizer is None:
            return [estimate_tokens(t) for t in texts]
        encoded = self.tokenizer(texts, add_special_tokens=True)["input_ids"]
        return [len(ids) for ids in encoded]


def _in_hf_cache(hub_id: str) -> bool:
    root = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "hub")
    return (Path(root) / ("models--" + hub_id.replace("/", "--"))).is_dir()


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _load_tokenizer(location: str) -> Any:
    # Importing transformers costs seconds: only when a tokenizer is really on this machine.
    if not (Path(location).is_dir() or _in_hf_cache(location)):
        return None
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return None
    try:  # offline only: a hub id counts only when it is already in the local HF cache
        return AutoTokenizer.from_pretrained(location, local_files_only=True)
    except (OSError, ValueError):
        return None
