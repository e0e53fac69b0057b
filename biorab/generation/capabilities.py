"""What a generation backend can do, declared as data on its class: callers ask the backend, never its name.

Each backend class holds a frozen `Capabilities` as its ``capabilities`` class attribute. Decisions made
before any backend is built (from a config: is its load worth deferring, does prefix order pay, does its
``model`` name a known model to prepare) read the registered class through `capabilities_of`, which never
instantiates it; for a lazily registered backend whose module is heavy (transformers imports torch), the
same object is declared in a light module (`biorab.common.registry.Registry.add_lazy`'s ``declared``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

from biorab.common.errors import ConfigError

#: What a run may ask of the engine that answers it beyond plain text generation: a LoRA adapter, vLLM's
#: batch-invariant mode, per-label log-probs (``sampling.score_labels``), the awareness probe, chat
#: messages, a thinking model's split or budget.
Feature = Literal["adapters", "batch_invariance", "label_scoring", "probes", "chat", "thinking"]

#: How a refusal names each feature: ``llm_engine X cannot <this>``.
FEATURE_WORDS: Mapping[str, str] = MappingProxyType({
    "adapters": "apply LoRA adapters",
    "batch_invariance": "set batch_invariant",
    "label_scoring": "score labels (per-label log-probs)",
    "probes": "run the awareness probe",
    "chat": "send chat messages",
    "thinking": "apply thinking settings (split, token_budget)",
})


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
        server_client: a client of a model server (its API key, token price and reasoning-model rules
            are the backend params', `biorab.generation.openai.params`).
        switches_adapters: Serve's generator switches LoRA adapters per request inside the engine
            (`serve.adapters.LoRAAdapters`) instead of one backend per adapter.
        cannot: feature → why this engine cannot do it and what to use instead (`check_engine`).
    """

    local_weights: bool = False
    deferred_load: bool = False
    prefix_cache: bool = False
    tensor_parallel: bool = False
    async_engine: str | None = None
    server_client: bool = False
    switches_adapters: bool = False
    cannot: Mapping[str, str] = field(default_factory=dict)


#: The default of a backend class that declares nothing.
NONE = Capabilities()


def capabilities_of(name: str) -> Capabilities:
    """The `Capabilities` of registered backend `name`, without building it (an unknown name is the
    registry's `UnknownNameError`)."""
    from biorab.common.registry import BACKENDS

    found = BACKENDS.attribute_of(name, "capabilities")
    return NONE if found is None else found


@dataclass(frozen=True)
class LLMEngine:
    """An LLM engine other than an actor pool of the run's backend (``resources.llm_engine``).

    Attributes:
        backend: the one backend whose params configure it.
        capabilities: what it can do (its `Capabilities.cannot`: what it refuses).
    """

    backend: str
    capabilities: Capabilities


_PROCESSOR_NOTE = "use llm_engine actors (backend vllm)"

#: ``resources.llm_engine`` → the engine; ``actors`` is the backend itself (its own `Capabilities`).
LLM_ENGINES: Mapping[str, LLMEngine] = MappingProxyType({
    # Ray's ray.data.llm processor: raw completions with one SamplingParams for all rows, built from the
    # vllm backend's params; rendering, parsing and the cache are BioRAB's stages around it.
    "vllm_processor": LLMEngine("vllm", Capabilities(local_weights=True, cannot=MappingProxyType({
        "adapters": f"its engine is built without LoRA; {_PROCESSOR_NOTE}",
        # the in-process backend sets VLLM_BATCH_INVARIANT; Ray's replicas would not see it
        "batch_invariance": f"Ray's engine replicas do not see it; {_PROCESSOR_NOTE}, or "
                            "VLLM_BATCH_INVARIANT=1 in the job's runtime_env env_vars",
        "label_scoring": f"it returns no per-label log-probs; {_PROCESSOR_NOTE} for AUROC/AUPRC",
        "probes": f"the probe stage is not placed around Ray's engine; {_PROCESSOR_NOTE} or set "
                  "awareness_probe: false",
        "chat": "it sends raw completions (no chat template) with one sampling seed for every row, while "
                f"chat prompts (DrugMech cells: each run with its own seed) need both; {_PROCESSOR_NOTE}",
        "thinking": "ray.data.llm generates and biorab parses the whole reply, reasoning included; "
                    f"{_PROCESSOR_NOTE}",
    }))),
})


def takes_param(name: str, key: str) -> bool:
    """Whether registered backend `name` has a param `key` (its ``Params`` model says, read without
    building it; an unknown name or a backend without params: False)."""
    from biorab.common.registry import BACKENDS

    if name not in BACKENDS:
        return False
    params = BACKENDS.params_of(name)
    return params is not None and key in params.model_fields


def engine_capabilities(engine: str, backend: str) -> Capabilities:
    """What `engine` (``resources.llm_engine``) can do with registered backend `backend`: the backend's own
    `Capabilities` on ``actors``, else the engine's."""
    found = LLM_ENGINES.get(engine)
    return capabilities_of(backend) if found is None else found.capabilities


def check_engine(engine: str, backend: str, asks: Mapping[str, str], *, path: str | Path | None = None
                 ) -> None:
    """The one check of what a run asks (`asks`: `Feature` → the config key that asks it) against what its
    engine can do, before any work; one message format for every refusal.

    Raises:
        ConfigError: ``llm_engine E cannot <feature>: <why>`` at the key that asked it, or at
            ``backend.name`` when the engine runs another backend.
    """
    found = LLM_ENGINES.get(engine)
    if found is not None and backend != found.backend:
        raise ConfigError(f"llm_engine {engine} cannot run backend {backend!r}: it runs {found.backend}; set "
                          f"backend.name: {found.backend}, or resources.llm_engine: actors",
                          key="backend.name", path=path)
    cannot = engine_capabilities(engine, backend).cannot
    for feature, key in asks.items():
        if feature in cannot:
            raise ConfigError(f"llm_engine {engine} cannot {FEATURE_WORDS[feature]}: {cannot[feature]}",
                              key=key, path=path)
