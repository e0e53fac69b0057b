"""Several adapters on one engine: the generator of a config with several RALs (``rals:``) on one base
model serves each call with the adapter its RAL names.

- transformers: the base model is wrapped once in a `peft.PeftModel`; each adapter is loaded under its own
  name when first asked for and activated (``set_adapter``) for the backend calls of its rows; a call for
  the base model runs with the adapter layers disabled. At most ``max_loaded`` adapters stay loaded (the
  least recently used is deleted first). Adapters stay unmerged (merging would change the base weights
  every other RAL shares).
- vLLM: one ``LoRARequest`` per adapter, sent with each engine request (`AsyncVLLMBackend.agenerate`'s
  ``lora``); the engine enables LoRA with ``max_loras`` = ``max_cpu_loras`` = ``max_loaded`` and the
  largest rank of the adapters, and keeps its own LRU of loaded adapters.

Each adapter keeps its own cache digest (`biorab.generation.model_source.weights_digest` of base + that
adapter), so generations of two RALs are never keyed alike.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from typing import Any

from biorab.generation.model_source import engine_digest, weights_digest
from serve.adapter import ResolvedAdapter


class PeftAdapters:
    """Named PEFT adapters switched on one transformers backend (see the module docstring)."""

    def __init__(self, backend: Any, adapters: Mapping[str, ResolvedAdapter], max_loaded: int) -> None:
        self.backend, self.adapters, self.max_loaded = backend, dict(adapters), max_loaded
        self.loaded: OrderedDict[str, None] = OrderedDict()
        self.peft: Any = None
        self.loads = 0

    def digest(self, uri: str | None) -> str:
        b = self.backend
        if uri is None:
            return str(b.model_digest)
        path = self.adapters[uri].path
        return engine_digest(weights_digest(b.source, path, b.dtype), "transformers",
                             b.params.model_copy(update={"adapter_path": path, "merge_adapter": False}))

    @contextlib.contextmanager
    def active(self, uri: str | None) -> Iterator[None]:
        """The backend's model answers with adapter `uri` (``None``: the base model) while the block runs."""
        if uri is None:
            with self.peft.disable_adapter() if self.peft is not None else contextlib.nullcontext():
                yield
            return
        self._load(uri)
        self.peft.set_adapter(self._name(uri))
        yield

    def _load(self, uri: str) -> None:
        name = self._name(uri)
        if uri in self.loaded:
            self.loaded.move_to_end(uri)
            return
        if self.peft is None:
            from peft import PeftModel

            self.peft = PeftModel.from_pretrained(self.backend.model, self.adapters[uri].path,
                                                  adapter_name=name)
            self.peft.eval()
            self.backend.model = self.peft
        else:
            while len(self.loaded) >= self.max_loaded:
                evicted, _ = self.loaded.popitem(last=False)
                self.peft.delete_adapter(self._name(evicted))
            self.peft.load_adapter(self.adapters[uri].path, adapter_name=name)
        self.loads += 1
        self.loaded[uri] = None

    def _name(self, uri: str) -> str:
        return f"a{list(self.adapters).index(uri)}"  # PEFT names are module attribute names: no '/' or ':'


class LoRAAdapters:
    """Named LoRA requests for one vLLM engine (see the module docstring)."""

    def __init__(self, backend: Any, adapters: Mapping[str, ResolvedAdapter]) -> None:
        from vllm.lora.request import LoRARequest

        self.backend, self.adapters = backend, dict(adapters)
        self.requests = {uri: LoRARequest(f"a{i}", i + 1, a.path)
                         for i, (uri, a) in enumerate(self.adapters.items())}

    def digest(self, uri: str | None) -> str:
        b = self.backend
        if uri is None:
            return engine_digest(weights_digest(b.source, None, b.params.dtype), "vllm", b.params)
        path = self.adapters[uri].path
        return engine_digest(weights_digest(b.source, path, b.params.dtype), "vllm",
                             b.params.model_copy(update={"adapter_path": path}))

    def request(self, uri: str | None) -> Any:
        return None if uri is None else self.requests[uri]


def vllm_params(params: dict[str, Any], adapters: Mapping[str, ResolvedAdapter], max_loaded: int
                ) -> dict[str, Any]:
    """The engine's params for serving `adapters` on one engine: LoRA on (the first adapter's folder
    enables it), ranks up to the largest adapter's, `max_loaded` adapters in a batch and in memory."""
    from biorab.generation.vllm.engine import lora_rank

    first = next(iter(adapters.values())).path
    rank = max(lora_rank(a.path) for a in adapters.values())
    engine_args = {"max_loras": max_loaded, "max_cpu_loras": max_loaded, **params.get("engine_args", {})}
    return {**params, "adapter_path": first, "max_lora_rank": params.get("max_lora_rank") or rank,
            "engine_args": engine_args}
