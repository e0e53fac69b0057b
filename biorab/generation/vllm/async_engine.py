"""vLLM's async engine (`vllm.v1.engine.async_llm.AsyncLLM`) for serving: continuous batching, abortable.

Serve's generator deployment uses it for a ``vllm`` backend block (`serve.engines`): every request goes to
the engine on arrival and joins the running batch, instead of waiting for a `serve.batch` window, and a
request whose caller went away is aborted inside the engine (cancelling the awaiting task makes vLLM abort
it; `abort(request_id)` does the same for a request id). It is the same engine as the offline ``vllm``
backend: the same params, model resolution, engine arguments, request plan (`RequestPlan`: label scoring
by `biorab.generation.vllm.label_scoring`, structured outputs), thinking split (``thinking: {split: true}``,
`biorab.generation.reasoning`) and cache digest, so a served generation and an evaluated one are keyed
alike. A thinking budget (``thinking.token_budget``, two passes on the offline engine) is refused here.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from typing import Any

from biorab.common.errors import BackendError
from biorab.common.records import Generation, Prompt
from biorab.generation.adapter_base import local_adapter
from biorab.generation.base import SamplingParams
from biorab.generation.model_source import engine_digest, resolve_model, weights_digest
from biorab.generation.reasoning import apply_split
from biorab.generation.vllm.engine import (
    RequestPlan,
    VLLMBackend,
    _import_vllm,
    _lora_request,
    _max_model_len,
    _on_cpu,
    engine_kwargs,
    prefix_block,
    set_engine_env,
)

#: `AsyncVLLMBackend.agenerate`'s default ``lora``: the adapter of the params (``adapter_path``), if any.
CONFIGURED = object()


class AsyncVLLMBackend:
    """An `AsyncLLM` built from a ``vllm`` backend block's `VLLMBackend.Params`."""

    Params = VLLMBackend.Params

    def __init__(self, params: VLLMBackend.Params | None = None) -> None:
        self.params = p = params or VLLMBackend.Params()
        if p.thinking.token_budget is not None:
            raise BackendError("backend.params.thinking.token_budget: the thinking budget runs on the "
                               "offline vllm engine (biorab run) and transformers, not on Serve's async "
                               "engine; leave it unset in the serve config")
        _import_vllm()
        from vllm.engine.arg_utils import AsyncEngineArgs
        from vllm.v1.engine.async_llm import AsyncLLM

        self.source = resolve_model(p.model, revision=p.revision, cache_dir=p.cache_dir,
                                    auto_prepare=p.auto_prepare)
        self.adapter = local_adapter(p.adapter_path, self.source)
        self._on_cpu = on_cpu = _on_cpu(p.device)
        set_engine_env(p, on_cpu=on_cpu)
        kwargs = engine_kwargs(p, self.source.location, on_cpu=on_cpu, adapter=self.adapter)
        self.engine: Any = AsyncLLM.from_engine_args(AsyncEngineArgs(**kwargs, disable_log_stats=True))
        self.tokenizer = self.engine.get_tokenizer()
        self._lora = _lora_request(self.adapter)
        self._digest = engine_digest(weights_digest(self.source, self.adapter, p.dtype), "vllm", p)
        self._ids = itertools.count()
        self._running: dict[str, list[str]] = {}  # request id -> its engine request ids

    @property
    def model_digest(self) -> str:
        return self._digest

    @property
    def context_length(self) -> int | None:
        return _max_model_len(self.engine)

    async def agenerate(self, prompts: Sequence[Prompt], params: SamplingParams,
                        request_id: str | None = None, *, lora: Any = CONFIGURED) -> list[Generation]:
        """One `Generation` per prompt, each prompt's requests sent to the running engine at once. `lora`:
        a ``LoRARequest`` for this call (``None``: the base model; several adapters on one engine, see
        `serve.adapters`), by default the configured adapter's."""
        if self.engine is None:
            raise BackendError("vllm async backend used after close()")
        lora_request = self._lora if lora is CONFIGURED else lora
        plan = RequestPlan.of(prompts, params, self.tokenizer, chat=self.params.chat,
                              choices_via=self.params.choices_via,
                              lora_on_cpu=lora_request is not None and self._on_cpu,
                              block_size=prefix_block(self.engine))
        owner = request_id or f"call-{next(self._ids)}"
        ids = self._running.setdefault(owner, [])
        try:
            scores = await asyncio.gather(*(self._one(owner, ids, prompt, sampling, lora_request)
                                            for prompt, sampling
                                            in zip(plan.score_prompts, plan.score_sampling, strict=True)))
            outputs = await asyncio.gather(*(self._one(owner, ids, prompt, sampling, lora_request)
                                             for prompt, sampling
                                             in zip(plan.generate_prompts, plan.generate_sampling,
                                                    strict=True)))
        finally:
            self._running.pop(owner, None)
        return [apply_split(g, self.params.thinking) for g in plan.finish(outputs, scores)]

    async def _one(self, owner: str, ids: list[str], prompt: dict[str, list[int]], sampling: Any,
                   lora: Any) -> Any:
        """The final output of one engine request (cancelling the awaiting task aborts it in the engine)."""
        engine_id = f"{owner}-{next(self._ids)}"
        ids.append(engine_id)
        final = None
        async for output in self.engine.generate(prompt, sampling, engine_id, lora_request=lora):
            final = output
        if final is None:
            raise BackendError(f"vLLM returned no output for request {engine_id}")
        return final

    def pending(self) -> int:
        """Engine requests not finished (running or waiting): 0 once every abandoned request is aborted."""
        return int(self.engine.output_processor.get_num_unfinished_requests()) if self.engine else 0

    async def abort(self, request_id: str) -> None:
        """Abort every engine request of `request_id` still running (a client that went away)."""
        ids = self._running.pop(request_id, [])
        if ids and self.engine is not None:
            await self.engine.abort(ids)

    def close(self) -> None:
        if getattr(self, "engine", None) is not None:
            self.engine.shutdown()
            self.engine = None
