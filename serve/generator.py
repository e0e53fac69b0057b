"""The generator deployment: one backend (transformers on CPU, vLLM on GPU) with request batching.

Every prompt of every call joins Serve's batch queue (`serve.batch`), so prompts of concurrent HTTP
requests are generated in one backend call (the transformers backend then pads them into one forward
pass). Prompts that cannot fit the model's context are answered with an error row in the transformers
backend's own words, before any compute (see `context_error`).

Calls carry a ticket (request id, seconds left; `serve.deadlines`). Work whose client is gone is dropped:
a cancelled call's queued prompts are never batched (Serve filters cancelled batch items), prompts whose
deadline passed while queued are answered `DROPPED` without compute, and both are counted
(``biorab_dropped_total``). The transformers backend cannot stop a running forward pass, so it is checked
between batches; an engine that can abort a running request (vLLM's async engine) plugs in through
``backend.abort(request_id)``, which `Generator` calls for cancelled prompts that were already running.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import re
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from ray import serve

from biorab.common.records import Generation, Prompt
from biorab.generation import build_backend
from biorab.generation.base import SamplingParams
from biorab.generation.capabilities import capabilities_of
from serve.deadlines import DeadlineExceeded, Ticket
from serve.metrics import DropMetrics

log = logging.getLogger("ray.serve")

#: How the transformers backend (and this deployment) words a prompt that does not fit; the ingress turns
#: such a row into HTTP 400 with these numbers.
CONTEXT_ERROR = re.compile(r"prompt has (\d+) tokens; with max_tokens=(\d+) it exceeds the model's "
                           r"context of (\d+) tokens")


#: The error text of a prompt dropped before compute (its deadline passed in the queue).
DROPPED = "dropped: the request's deadline passed before its batch started"
#: The error text of a prompt whose generation raised (the replica log has the trace); its request gets 502,
#: its batch-mates their answers.
FAILED = "generation failed for this prompt"


def serving_backend(name: str, params: dict[str, Any]) -> Any:
    """The backend a generator replica serves with: the backend's async engine where its capabilities
    name one (`Capabilities.async_engine`: for ``vllm``, vLLM's async engine, continuous batching and aborts,
    `biorab.generation.vllm.async_engine`) from the same params as the offline engine; else the registry's
    backend, batched by `serve.batch`."""
    engine = capabilities_of(name).async_engine
    if engine is None:
        return build_backend(name, params)
    from biorab.common.config_loading import validate_mapping

    module, attribute = engine.split(":", 1)
    cls = getattr(importlib.import_module(module), attribute)
    return cls(validate_mapping(cls.Params, params, key_prefix="backend.params"))


#: Likewise for a label that, scored as a continuation of the prompt, does not fit.
LABEL_CONTEXT_ERROR = re.compile(r"prompt has (\d+) tokens; with a label of (\d+) tokens to score it "
                                 r"exceeds the model's context of (\d+) tokens")


def context_error(prompt_tokens: int, max_tokens: int, limit: int | None, label_tokens: int = 0
                  ) -> Generation | None:
    """An error row when `prompt_tokens` + `max_tokens` exceed `limit` (``None``: no known limit), or
    `prompt_tokens` + `label_tokens` (the longest label, scored as a continuation of the prompt) do."""
    if limit is None:
        return None
    if prompt_tokens + max_tokens > limit:
        return Generation(text="", prompt_tokens=prompt_tokens, error=(
            f"prompt has {prompt_tokens} tokens; with max_tokens={max_tokens} it exceeds the model's "
            f"context of {limit} tokens"))
    if prompt_tokens + label_tokens > limit:
        return Generation(text="", prompt_tokens=prompt_tokens, error=(
            f"prompt has {prompt_tokens} tokens; with a label of {label_tokens} tokens to score it exceeds "
            f"the model's context of {limit} tokens"))
    return None


@serve.deployment(name="generator")
class Generator:
    """Args:
        backend: ``{"name": ..., "params": {...}}`` (a run config's backend block).
        adapter: a PEFT folder or MLflow model URI (resolved here, lazily, by `serve.adapter`), applied to
            every call (merged into the weights on transformers).
        adapters: several adapters on this one engine, one per call (``generate(..., adapter=uri)``; the
            RALs of a config's ``rals:`` on this base model; `serve.adapters`), at most
            `max_loaded_adapters` loaded at once.
        context_tokens: the context limit to enforce (``None``: the backend's ``context_length``).
        max_batch_size / batch_wait_timeout_s: `serve.batch` settings.
    """

    def __init__(self, backend: dict[str, Any], *, adapter: str | None = None,
                 adapters: Sequence[str] = (), max_loaded_adapters: int = 4,
                 tracking_uri: str | None = None,
                 cache_dir: str | None = None, context_tokens: int | None = None, max_batch_size: int = 8,
                 batch_wait_timeout_s: float = 0.02) -> None:
        from serve.adapter import ResolvedAdapter, resolve_adapter

        params = dict(backend.get("params") or {})
        self.adapter_uri, self.adapter_path, self.adapter_version = adapter, None, None
        if adapter is not None:
            resolved = resolve_adapter(adapter, tracking_uri=tracking_uri, cache_dir=cache_dir)
            self.adapter_path, self.adapter_version = resolved.path, resolved.version
            params["adapter_path"] = resolved.path
            log.info("adapter %s resolved to %s", adapter, resolved.path)
        #: The adapters switched per call (several RALs on this engine), by URI.
        self.adapters: dict[str, ResolvedAdapter] = {
            uri: resolve_adapter(uri, tracking_uri=tracking_uri, cache_dir=cache_dir) for uri in adapters}
        self.backend_name = backend["name"]
        self.base_model = str(params.get("model", "default"))
        switches = capabilities_of(self.backend_name).switches_adapters
        if self.adapters and switches:
            from serve.adapters import vllm_params

            params = vllm_params(params, self.adapters, max_loaded_adapters)
        self.backend = serving_backend(self.backend_name, params)
        self.switch: Any = None
        if self.adapters:
            from serve.adapters import LoRAAdapters, PeftAdapters

            self.switch = (LoRAAdapters(self.backend, self.adapters) if switches
                           else PeftAdapters(self.backend, self.adapters, max_loaded_adapters))
        #: An engine with its own continuous batching (vLLM's async engine): no `serve.batch` window.
        self.continuous = hasattr(self.backend, "agenerate")
        self.context_tokens = context_tokens or getattr(self.backend, "context_length", None)
        self.tokenizer = getattr(self.backend, "tokenizer", None)
        # serve.batch's wrapper has these setters; its type stub does not say so.
        self._batch.set_max_batch_size(max_batch_size)  # type: ignore[attr-defined]
        self._batch.set_batch_wait_timeout_s(batch_wait_timeout_s)  # type: ignore[attr-defined]
        self.batch_sizes: deque[int] = deque(maxlen=10_000)
        self.drops = DropMetrics()
        #: Work not done, by "reason/stage" (tests and benches read it; /metrics has the same counts).
        self.dropped: dict[str, int] = {}
        self._aborts: set[asyncio.Future[Any]] = set()  # running abort calls (kept from the GC)

    def info(self, adapter: str | None = None) -> dict[str, Any]:
        """What `/v1/models` shows and what keys the ingress's generation cache; `adapter`: one of the
        adapters switched per call (else the replica's own)."""
        if self.switch is None:
            return {"backend": self.backend_name, "base_model": self.base_model, "adapter": self.adapter_uri,
                    "adapter_version": self.adapter_version, "model_digest": self.backend.model_digest,
                    "context_tokens": self.context_tokens}
        version = self.adapters[adapter].version if adapter is not None else None
        return {"backend": self.backend_name, "base_model": self.base_model, "adapter": adapter,
                "adapter_version": version, "model_digest": self.switch.digest(adapter),
                "context_tokens": self.context_tokens}

    def adapter_stats(self) -> dict[str, Any]:
        """Adapters this engine switches and how many are loaded now (tests read it)."""
        loaded = getattr(self.switch, "loaded", None)
        return {"adapters": list(self.adapters), "loaded": list(loaded) if loaded is not None else None,
                "loads": getattr(self.switch, "loads", None)}

    def batch_stats(self) -> list[int]:
        """The sizes of the backend calls made so far (tests and benches check that batching batches)."""
        return list(self.batch_sizes)

    def engine_pending(self) -> int | None:
        """Requests the engine still holds (``None``: an engine that does not say, e.g. transformers)."""
        pending = getattr(self.backend, "pending", None)
        return None if pending is None else int(pending())

    def drop_stats(self) -> dict[str, int]:
        """Prompts not generated, by ``reason/stage`` (``cancelled/queued``, ``deadline/queued``,
        ``cancelled/running``)."""
        return dict(self.dropped)

    async def generate(self, prompts: Sequence[Prompt], sampling: SamplingParams,
                       ticket: dict[str, Any] | None = None, adapter: str | None = None) -> list[Generation]:
        """One generation per prompt, in order; each prompt joins the shared batch queue. `ticket`: the
        request's id and seconds left (`serve.deadlines.RequestScope.ticket`); raises `DeadlineExceeded`
        when the deadline passed before the prompts were batched. `adapter`: one of `adapters` (several
        RALs on this engine; ``None``: the replica's own model)."""
        t = Ticket.of(ticket)
        if adapter is not None and adapter not in self.adapters:
            raise ValueError(f"adapter {adapter!r} is not served by this generator: {list(self.adapters)}")
        t.adapter = adapter
        try:
            if self.continuous:
                gens = await self._continuous(prompts, sampling, t)
            else:
                gens = list(await asyncio.gather(*(self._batch((p, sampling, t)) for p in prompts)))
        except asyncio.CancelledError:  # the caller gave up (deadline, client gone, server stopping)
            self._cancelled(t, len(prompts))
            raise
        if any(g.error == DROPPED for g in gens):
            raise DeadlineExceeded(t.request_id)
        return gens

    async def _continuous(self, prompts: Sequence[Prompt], sampling: SamplingParams,
                          t: Ticket) -> list[Generation]:
        """The prompts straight into the running engine (it batches continuously); prompts over the
        context get their error row, a call whose deadline passed before it started gets `DROPPED`.
        Cancelling this call (client gone, deadline) aborts its requests inside the engine."""
        out: list[Generation | None] = [self._too_long(p, sampling) for p in prompts]
        rows = [i for i, g in enumerate(out) if g is None]
        if rows and t.expired(time.monotonic()):
            self._count_drop("deadline", "queued", len(rows))
            return [g or Generation(text="", error=DROPPED) for g in out]
        if rows:
            t.started = True
            self.batch_sizes.append(len(rows))
            lora = {} if self.switch is None else {"lora": self.switch.request(t.adapter)}
            gens = await self.backend.agenerate([prompts[i] for i in rows], sampling, request_id=t.engine_key,
                                                **lora)
            for i, gen in zip(rows, gens, strict=True):
                out[i] = gen
        return [g if g is not None else Generation(text="", error="internal: row not generated") for g in out]

    def _cancelled(self, t: Ticket, n: int) -> None:
        if not t.started:
            self._count_drop("cancelled", "queued", n)
            return
        self._count_drop("cancelled", "running", n)
        abort = getattr(self.backend, "abort", None)
        if abort is not None and t.request_id:  # an engine that can stop a running request
            done = abort(t.engine_key)
            if inspect.isawaitable(done):  # vLLM's async engine: `await engine.abort(request_id)`
                self._aborts.add(task := asyncio.ensure_future(done))
                task.add_done_callback(self._aborts.discard)

    def _count_drop(self, reason: str, stage: str, n: int) -> None:
        key = f"{reason}/{stage}"
        self.dropped[key] = self.dropped.get(key, 0) + n
        self.drops.dropped(reason, stage, n)

    @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.02)
    async def _batch(self, items: list[tuple[Prompt, SamplingParams, Ticket]]) -> list[Generation]:
        return await self.run_batch(items)

    async def run_batch(self, items: Sequence[tuple[Prompt, SamplingParams, Ticket]]) -> list[Generation]:
        """Generate one batch of (prompt, sampling, ticket) items: prompts over the context get an error
        row, prompts whose deadline passed get `DROPPED`, the rest go to the backend in one call per
        distinct sampling."""
        out: list[Generation | None] = [None] * len(items)
        groups: dict[str, list[int]] = {}
        for i, (prompt, sampling, _ticket) in enumerate(items):
            too_long = self._too_long(prompt, sampling)
            if too_long is not None:
                out[i] = too_long
            else:  # one backend call per distinct sampling and adapter (answers and probes differ)
                groups.setdefault(f"{sampling.digest()}/{_ticket.adapter}", []).append(i)
        for group in groups.values():
            rows = self._unexpired(items, group, out)
            if not rows:
                continue
            prompts, sampling = [items[i][0] for i in rows], items[rows[0]][1]
            for i in rows:
                items[i][2].started = True
            self.batch_sizes.append(len(prompts))
            gens = await self._isolated(prompts, sampling, items[rows[0]][2].adapter)
            for i, gen in zip(rows, gens, strict=True):
                out[i] = gen
        return [g if g is not None else Generation(text="", error="internal: row not generated") for g in out]

    async def _isolated(self, prompts: list[Prompt], sampling: SamplingParams, adapter: str | None
                        ) -> list[Generation]:
        """One backend call for a group; when it raises, each prompt alone, so that only the rows that
        fail get an error row (`FAILED`) and their batch-mates their answers. An exception escaping
        `run_batch` would fail every request of the batch (Serve sets it on all of their futures)."""
        try:
            return await asyncio.to_thread(self._backend_call, prompts, sampling, adapter)
        except Exception:
            if len(prompts) == 1:
                log.exception("generation failed for one prompt (%s)", prompts[0].example_id)
                return [Generation(text="", error=FAILED)]
            log.warning("a batch of %d failed; generating its prompts one by one", len(prompts))
        return [gen for p in prompts for gen in await self._isolated([p], sampling, adapter)]

    def _backend_call(self, prompts: list[Prompt], sampling: SamplingParams, adapter: str | None
                      ) -> list[Generation]:
        if self.switch is None:
            return list(self.backend.generate(prompts, sampling))
        with self.switch.active(adapter):  # batches run one at a time: the switch holds for this call
            return list(self.backend.generate(prompts, sampling))

    def _unexpired(self, items: Sequence[tuple[Prompt, SamplingParams, Ticket]], rows: list[int],
                   out: list[Generation | None]) -> list[int]:
        """`rows` less those whose deadline passed (answered `DROPPED`): checked again before each
        backend call, since an earlier call of the same batch may have taken long."""
        now, kept = time.monotonic(), []
        for i in rows:
            if items[i][2].expired(now):
                out[i] = Generation(text="", error=DROPPED)
                self._count_drop("deadline", "queued", 1)
            else:
                kept.append(i)
        return kept

    def _too_long(self, prompt: Prompt, sampling: SamplingParams) -> Generation | None:
        """`context_error` for `prompt`, counting its labels too: a closed prompt's labels (a request's
        own label space among them) may be scored as continuations of it."""
        choices = prompt.constraint.choices if prompt.constraint is not None else None
        longest = max((self._count_text(c) for c in choices), default=0) if choices else 0
        return context_error(self._count(prompt), sampling.max_tokens, self.context_tokens, longest)

    def _count(self, prompt: Prompt) -> int:
        """Prompt tokens as the backend counts them (the fake backend counts words)."""
        if self.tokenizer is None:
            return len(prompt.text.split())
        return len(self.tokenizer(prompt.text)["input_ids"])

    def _count_text(self, text: str) -> int:
        """A continuation's tokens (no special tokens: it follows the prompt)."""
        if self.tokenizer is None:
            return len(text.split())
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def __del__(self) -> None:
        backend = getattr(self, "backend", None)
        if backend is not None:
            backend.close()
