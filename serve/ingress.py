"""The ingress deployment: the HTTP API (FastAPI) over the RAL core.

Each request runs `biorab.ral.RAL` (retrieve → render → generate → parse → probe) in a worker thread, with
a retriever and a backend that are thin clients of the retriever and generator deployments
(`serve.clients`): the served answer is the core's answer, computed by the same code as `biorab run`.

Each request gets a deadline (`serve.deadlines`); a request whose deadline passes before the generator
answers gets 503 with ``Retry-After`` and its queued work is dropped, as is the work of a client that
disconnects. `drain` (called by `biorab serve` on SIGTERM/Ctrl-C) stops admitting requests (503) while
the in-flight ones finish.
"""

# No `from __future__ import annotations`: FastAPI reads the route signatures of the Serve-wrapped
# methods at runtime, and string annotations of the request models would turn bodies into query params.

import asyncio
import functools
import logging
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from ray import serve
from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError

from biorab.caches import GenerationStore, default_store_paths
from biorab.ral import Answer, RALParts
from serve import answering
from serve.adapter import public_name
from serve.admission import Admission, QueueFull, Refused
from serve.answering import Answerer
from serve.auth import KeyCheck
from serve.clients import Timings
from serve.config import EndpointConfig, RALConfig
from serve.deadlines import (
    DeadlineExceeded,
    RequestCancelled,
    RequestScope,
    budget_s,
    client_timeout_s,
    run_in_scope,
)
from serve.drain import DrainWatch
from serve.errors import (
    ApiError,
    backpressure,
    client_gone,
    deadline_passed,
    queue_full,
    stopping,
    unavailable,
)
from serve.http import GUARD, Guard, install
from serve.metrics import AppMetrics
from serve.openai_format import chat_chunk, chat_completion
from serve.schemas import ChatRequest, RALRequest, RetrieveRequest
from serve.stores import thread_safe
from serve.tracing import ServeTracer

log = logging.getLogger("ray.serve")
T = TypeVar("T")

api = FastAPI(title="BioRAB RAL", docs_url=None, redoc_url=None)
install(api)


def refusal(retry_after_s: float, e: Refused) -> ApiError:
    """The 503 of a refused deployment call, by its path (`serve.admission.Refused.cause`)."""
    if isinstance(e, QueueFull):
        return queue_full(retry_after_s, e.deployment, e.in_flight, e.limit)
    if e.cause == "unavailable":
        return unavailable(retry_after_s, e.deployment)
    return backpressure(retry_after_s, e.deployment, e.detail)


@dataclass
class Served:
    """One RAL behind the endpoint: its config, parts, deployment handles and the adapter its generator
    switches to (several RALs on one engine), and, once asked, its answerer and model info."""

    config: RALConfig
    parts: RALParts
    retriever: Any
    generator: Any
    adapter: str | None
    admissions: tuple[Admission, Admission]
    answerer: Answerer | None = None
    model_info: dict[str, Any] = field(default_factory=dict)
    first_call: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def task(self) -> str | None:
        return self.answerer.task if self.answerer else None


@serve.deployment(name="ingress")
@serve.ingress(api)
class Ingress:
    """Args:
        config: the `EndpointConfig` as JSON (its ``rals``: each served RAL's `RALConfig`).
        rals: each served RAL by name (`serve.app.compose`), in the order of the config's ``rals``:
            ``parts`` (assembled once for the app, `serve.answering.serve_parts`; its retriever deployment
            builds its retriever from the same), ``retriever`` / ``generator`` (handles; ``retriever`` is
            None without retrieval) with their deployment names, and the ``adapter`` its generator switches
            to. The first is the default of requests that name no model.
        key_digests: SHA-256 digests of the accepted API keys (``None``: auth disabled).
        control_dir: the folder `biorab serve` drains through (`serve.drain`; ``None``: not drained).
    """

    def __init__(self, config: dict[str, Any], rals: dict[str, dict[str, Any]],
                 key_digests: list[str] | None, control_dir: str | None = None) -> None:
        self.cfg = cfg = EndpointConfig.model_validate(config)
        self.metrics = AppMetrics()
        self.guard = GUARD["guard"] = Guard(KeyCheck(key_digests) if key_digests is not None else None,
                                            cfg.limits.max_body_bytes, self.metrics.request)
        # The core is synchronous: one thread per request the replica may hold.
        self.pool = ThreadPoolExecutor(max_workers=cfg.deployments.ingress.max_ongoing_requests,
                                       thread_name_prefix="ral")
        # The bounded queues of the deployments behind the ingress, counted exactly (`serve.admission`).
        self.admissions: dict[str, Admission] = {}
        self.rals: dict[str, Served] = {}
        for one in cfg.rals:
            ral = rals[one.name]
            to_retriever = self._admission(ral["retriever_name"], cfg.deployments.retriever.admission_limit)
            to_generator = self._admission(ral["generator_name"], cfg.deployments.generator.admission_limit)
            self.rals[one.name] = Served(one, ral["parts"], ral["retriever"], ral["generator"],
                                         ral["adapter"], (to_retriever, to_generator))
        self.default = next(iter(self.rals.values()))
        self.tracer: ServeTracer | None = None
        if cfg.tracing.enabled:  # sampled traces into the configured MLflow experiment (serve.tracing)
            t = cfg.tracing
            self.tracer = ServeTracer(cfg.mlflow_tracking_uri, t.experiment, t.sample_rate, seed=t.seed)
        if control_dir is not None:  # `biorab serve` on its local Ray: SIGTERM/Ctrl-C drain (serve.drain)
            DrainWatch(control_dir, self.drain, self.guard.stats)

    def _admission(self, deployment: str | None, limit: int | None) -> Admission:
        name = deployment or "retriever"
        if name not in self.admissions:
            self.admissions[name] = Admission(name, limit)
        return self.admissions[name]

    def served(self, model: str | None, *, param: str = "model") -> Served:
        """The RAL a request names (``None``: the default); 404 naming the served ones otherwise."""
        if model is None:
            return self.default
        found = self.rals.get(model)
        if found is None:
            raise ApiError(404, f"model {model!r} is not served here; GET /v1/models lists "
                                f"{', '.join(repr(n) for n in self.rals)}", param=param)
        return found

    async def answerer(self, ral: Served | None = None) -> Answerer:
        ral = ral or self.default
        if ral.answerer is None:
            async with ral.first_call:  # a first burst asks once, rather than filling the generator's queue
                if ral.answerer is None:
                    ral.answerer = await self._new_answerer(ral)
        return ral.answerer

    async def _new_answerer(self, ral: Served) -> Answerer:
        retry = self.cfg.deployments.ingress.retry_after_s
        try:  # the model digest keys the generation cache: ask the generator once
            ral.model_info = await ral.generator.info.remote(ral.adapter)
        except BackPressureError as e:
            self.metrics.refused("serve-backpressure", "generator")
            raise backpressure(retry, "generator", e.message) from e
        except DeploymentUnavailableError as e:
            self.metrics.refused("unavailable", "generator")
            raise unavailable(retry, "generator") from e
        store = None
        if self.cfg.cache.generations:
            from biorab.common.paths import cache_dir

            store = thread_safe(GenerationStore(default_store_paths(cache_dir(self.cfg.cache.dir))[1]))
        return Answerer(ral.config, self.cfg.limits, ral.parts, ral.retriever, ral.generator,
                        ral.model_info["model_digest"], store, admissions=ral.admissions, adapter=ral.adapter)

    def scope(self, request: Request) -> RequestScope:
        """The request's deadline: the server's timeout, shortened by the client's own (its headers)."""
        http = self.cfg.http
        seconds = budget_s(http.request_timeout_s, client_timeout_s(request.headers), http.deadline_margin_s)
        return RequestScope.starting_now(request.state.request_id, seconds)

    async def _in_thread(self, fn: Callable[[], T], scope: RequestScope) -> T:
        """`fn` (the core, blocking on the deployments) in a worker thread, under `scope`'s deadline."""
        retry = self.cfg.deployments.ingress.retry_after_s
        try:
            return await asyncio.get_running_loop().run_in_executor(self.pool, run_in_scope, scope, fn)
        except asyncio.CancelledError:  # the client disconnected: the thread cancels its calls
            scope.cancelled.set()
            raise
        except Refused as e:  # a deployment behind the ingress is full or down: say which, and why
            self.metrics.refused(e.cause, e.deployment)
            raise refusal(retry, e) from e
        except DeadlineExceeded as e:  # queued work was dropped; the client may retry elsewhere/later
            self.metrics.refused("deadline", "")
            raise deadline_passed(retry, scope) from e
        except RequestCancelled as e:  # the client is gone: nobody reads this answer
            self.metrics.refused("cancelled", "")
            raise client_gone(retry) from e

    def drain(self) -> None:
        """Stop admitting requests (the middleware answers them 503 with Retry-After; /readyz says not
        ready); the open ones go on."""
        self.guard.stopping = stopping(self.cfg.deployments.ingress.retry_after_s)

    def _check_input(self, text: str, field: str) -> None:
        limit = self.cfg.limits.max_input_chars
        if len(text) > limit:
            raise ApiError(422, f"field '{field}': {len(text)} characters exceed the limit of {limit}",
                           param=field)

    async def _answer(self, ral: Served, text: str, *, scope: RequestScope,
                      fields: dict[str, Any] | None = None, example_id: str | None = None,
                      k: int | None = None, labels: list[str] | None = None,
                      sampling: dict[str, Any] | None = None) -> tuple[Answer, Timings]:
        answerer = await self.answerer(ral)
        example = answering.example_of(ral.config, answerer.task, text, fields or {},
                                       example_id or scope.request_id)
        answer, timings = await self._in_thread(functools.partial(
            answerer.answer, example, k=k, labels=labels, sampling=sampling), scope)
        self.metrics.observe(answer, timings)
        if self.tracer is not None:
            self.tracer.submit(answer, example, name=ral.config.name, info=ral.model_info,
                               request_id=scope.request_id)
        return answer, timings

    # -- probes ---------------------------------------------------------------------------------------

    @api.get("/healthz")
    async def healthz(self) -> dict[str, str]:
        return {"status": "ok"}

    @api.get("/readyz")
    async def readyz(self) -> JSONResponse:
        if self.guard.stopping is not None:
            return JSONResponse({"status": "stopping"}, status_code=503, headers={"Retry-After": "5"})
        try:
            for ral in self.rals.values():
                await asyncio.wait_for(self.answerer(ral), timeout=5)
                if ral.retriever is not None:
                    await asyncio.wait_for(ral.retriever.ready.remote(), timeout=5)
        except (TimeoutError, BackPressureError, DeploymentUnavailableError):
            return JSONResponse({"status": "not ready"}, status_code=503, headers={"Retry-After": "5"})
        return JSONResponse({"status": "ready", "model": self.default.config.name, "models": list(self.rals)})

    # -- API ------------------------------------------------------------------------------------------

    @api.get("/v1/models")
    async def models(self) -> dict[str, Any]:
        data = []
        for name, ral in self.rals.items():
            await self.answerer(ral)
            info = ral.model_info
            data.append({
                "id": name, "object": "model", "created": 0, "owned_by": "biorab",
                "biorab": {"base_model": info["base_model"], "adapter": public_name(info["adapter"]),
                           "adapter_version": info["adapter_version"], "backend": info["backend"],
                           "dataset": ral.config.dataset, "task": ral.task,
                           "retrieval": ral.config.retrieval.model_dump(mode="json"),
                           "sampling": ral.config.sampling.model_dump(mode="json"),
                           "parser": ral.config.parser,
                           "model_digest": info["model_digest"]}})
        return {"object": "list", "data": data}

    @api.post("/v1/retrieve")
    async def retrieve(self, body: RetrieveRequest, request: Request) -> dict[str, Any]:
        ral = self.served(body.model)
        self._check_input(body.input, "input")
        answerer = await self.answerer(ral)
        if not ral.config.retrieval.retrieves:
            raise ApiError(422, "this RAL does not retrieve (testbed 'none')")
        answering.check_scope(ral.config, self.cfg.limits, answerer.task, req_task=None, req_dataset=None,
                              labels=None, k=body.k)
        hits, timings = await self._in_thread(functools.partial(answerer.retrieve, body.input, body.k),
                                              self.scope(request))
        return {"request_id": request.state.request_id, "evidence": answering.evidence(hits),
                "timings_ms": {"retrieval": round(timings.retrieval_s * 1000, 3)}}

    @api.post("/v1/ral")
    async def ral(self, body: RALRequest, request: Request) -> dict[str, Any]:
        started = time.perf_counter()
        ral = self.served(body.model)
        self._check_input(body.input, "input")
        answerer = await self.answerer(ral)
        answering.check_scope(ral.config, self.cfg.limits, answerer.task, req_task=body.task,
                              req_dataset=body.dataset, labels=body.labels, k=body.k)
        rid = request.state.request_id
        answer, timings = await self._answer(ral, body.input, scope=self.scope(request), fields=body.fields,
                                             example_id=body.id, k=body.k, labels=body.labels)
        return {**self._described(ral, answer, timings, started, rid),
                "generation": answering.generation(answer), "prompt": answer.prompt.text}

    @api.post("/v1/chat/completions", response_model=None)
    async def chat(self, body: ChatRequest, request: Request) -> JSONResponse | StreamingResponse:
        started = time.perf_counter()
        ral = self.served(body.model)
        text = body.last_user_text()
        self._check_input(text, "messages")
        unsupported = body.unsupported()
        if unsupported is not None:  # as OpenAI answers a parameter a model does not support
            raise ApiError(400, f"field '{unsupported}': not supported by this server (a RAL answers in its "
                                "template's format, read by its parser: no tools, structured response "
                                "formats or log-probabilities)", param=unsupported)
        # 422 before any work is queued
        answering.check_sampling(ral.config, self.cfg.limits, body.sampling_update())
        rid = request.state.request_id
        answer, timings = await self._answer(ral, text, scope=self.scope(request),
                                             sampling=body.sampling_update())
        extension = self._described(ral, answer, timings, started, rid)
        if body.stream:
            return StreamingResponse(self._sse(answer, ral.config.name, extension, rid),
                                     media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
        return JSONResponse(chat_completion(answer, ral.config.name, rid, extension))

    async def _sse(self, answer: Answer, model: str, extension: dict[str, Any], rid: str
                   ) -> AsyncIterator[str]:
        for data in chat_chunk(answer, model, rid, extension):
            yield data

    def _described(self, ral: Served, answer: Answer, timings: Timings, started: float, rid: str
                   ) -> dict[str, Any]:
        info = ral.model_info
        return {
            "request_id": rid, "id": answer.example_id, "model": ral.config.name,
            "base_model": info["base_model"], "adapter": public_name(info["adapter"]),
            "adapter_version": info["adapter_version"], "task": ral.task,
            "dataset": ral.config.dataset, "label": answer.prediction.label,
            "prediction": answering.prediction(answer), "evidence": answering.evidence(answer.hits),
            "awareness": answering.awareness(answer),
            "timings_ms": {"retrieval": round(timings.retrieval_s * 1000, 3),
                           "generation": round(timings.generation_s * 1000, 3),
                           "total": round((time.perf_counter() - started) * 1000, 3)},
        }

    def trace_stats(self) -> dict[str, int]:
        """Traces written and failed by this replica (tests read it); waits for pending writes."""
        if self.tracer is None:
            return {"written": 0, "failed": 0}
        self.tracer.flush()
        return {"written": self.tracer.written, "failed": self.tracer.failed}

    def admission_stats(self) -> dict[str, dict[str, int | None]]:
        """Calls in flight and refused per deployment behind this replica (tests and benches)."""
        return {name: {"in_flight": a.in_flight, "refused": a.refused, "limit": a.limit}
                for name, a in self.admissions.items()}

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(wait=False)

