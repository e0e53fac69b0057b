"""The params of the ``transformers`` backend, in a module of their own.

Checking a config (`biorab validate`, the driver of `biorab run`) validates these params without
importing `biorab.generation.hf.backend`, whose torch and transformers imports cost seconds of CPU on a
process
that never generates (registered with ``BACKENDS.add_lazy(..., params=...)``). The fields are documented
on `biorab.generation.hf.backend.TransformersBackend`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from biorab.common.params import Params as BaseParams
from biorab.generation.capabilities import Capabilities
from biorab.generation.reasoning import ThinkingParams

#: `TransformersBackend.capabilities`, here so that asking them imports no torch: the weights load in
#: process and take seconds, and there is no prefix cache.
CAPABILITIES = Capabilities(local_weights=True, deferred_load=True)


class TransformersParams(BaseParams):
    model: str = "smollm2"
    revision: str | None = None
    adapter_path: str | None = Field(default=None, validation_alias=AliasChoices("adapter_path", "adapter"))
    merge_adapter: bool = True
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    device: str = "cpu"
    batch_size: int = Field(default=8, ge=1)
    num_threads: int | None = Field(default=None, ge=1)
    chat: bool = False
    choices_via: Literal["score", "grammar"] = "score"
    cache_dir: str | None = None
    auto_prepare: bool = True
    trust_remote_code: bool = False
    thinking: ThinkingParams = Field(default_factory=ThinkingParams)
