"""What a generation backend can do, declared as data on its class: callers ask the backend, never its name.

Each backend class holds a frozen `Capabilities` as its ``capabilities`` class attribute. Decisions made
before any backend is built (from a config: is its load worth deferring, does prefix order pay, does its
``model`` name a known model to prepare) read the registered class through `capabilities_of`, which never
instantiates it; for a lazily registered backend whose module is heavy (transformers imports torch), the
same object is declared in a light module (`biorab.common.registry.Registry.add_lazy`'s ``declared``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capabilities:
    """A backend's capabilities (every flag off: a backend that only generates text).

    Attributes:
        local_weights: loads a model's weights in this process: its ``model`` may name a known model
            (`biorab.generation.prepare`), and its cache digest is that of the weights
            (`biorab.generation.model_info`).
        deferred_load: loading takes seconds to minutes and the digest is known without it, so a run
            builds it on its first cache miss only (`biorab.generation.deferred`).
        prefix_cache: reuses the computation of a shared prompt prefix, so rows in prompt-prefix order pay
            (`biorab.execution.ExecutionRequest.prefix_ordered`).
        tensor_parallel: one replica may span several GPUs (``tensor_parallel_size``; Serve's placement).
        async_engine: ``"module:attribute"`` of the async engine Serve's generator replicas use instead
            (continuous batching, aborts); ``None``: the backend itself, batched by `serve.batch`.
    """

    local_weights: bool = False
    deferred_load: bool = False
    prefix_cache: bool = False
    tensor_parallel: bool = False
    async_engine: str | None = None


#: The default of a backend class that declares nothing.
NONE = Capabilities()


def capabilities_of(name: str) -> Capabilities:
    """The `Capabilities` of registered backend `name`, without building it (an unknown name is the
    registry's `UnknownNameError`)."""
    from biorab.common.registry import BACKENDS

    found = BACKENDS.attribute_of(name, "capabilities")
    return NONE if found is None else found
