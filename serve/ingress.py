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
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse
from ray import serve
from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError

from biorab.caches import GenerationStore, default_store_paths
from biorab.ral import Answer, RALParts
from serve import answering
from serve.admission import Admission, QueueFull, Refused
from serve.answering import Answerer
from serve.auth import KeyCheck
from serve.clients import Timings
from serve.config import ServeConfig
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


@serve.deployment(name="ingress")
@serve.ingress(api)
class Ingress:
    """Args:
        config: the `ServeConfig` as JSON.
        retriever / generator: handles of the two deployments (``retriever`` is None without retrieval).
        key_digests: SHA-256 digests of the accepted API keys (``None``: auth disabled).
        control_dir: the folder `biorab serve` drains through (`serve.drain`; ``None``: not drained).
        parts: the served RAL's parts, assembled once for the app (`serve.answering.serve_parts`; the
            retriever deployment builds its retriever from the same).
    """

    def __init__(self, config: dict[str, Any], retriever: Any, generator: Any,
                 key_digests: list[str] | None, control_dir: str | None = None, *,
                 parts: RALParts) -> None:
        self.cfg = cfg = ServeConfig.model_validate(config)
        self.parts, self.retriever, self.generator = parts, retriever, generator
        self.metrics = AppMetrics()
        self.guard = GUARD["guard"] = Guard(KeyCheck(key_digests) if key_digests is not None else None,
                                            cfg.limits.max_body_bytes, self.metrics.request)
        # The core is synchronous: one thread per request the replica may hold.
        self.pool = ThreadPoolExecutor(max_workers=cfg.deployments.ingress.max_ongoing_requests,
                                       thread_name_prefix="ral")
        # The bounded queues of the deployments behind the ingress, counted exactly (`serve.admission`).
        self.admissions = {"retriever": Admission("retriever", cfg.deployments.retriever.admission_limit),
                           "generator": Admission("generator", cfg.deployments.generator.admission_limit)}
        self._answerer: Answerer | None = None
        self._first_call = asyncio.Lock()
        self.model_info: dict[str, Any] = {}
        if control_dir is not None:  # `biorab serve` on its local Ray: SIGTERM/Ctrl-C drain (serve.drain)
            DrainWatch(control_dir, self.drain, self.guard.stats)

    async def answerer(self) -> Answerer:
        if self._answerer is None:
            async with self._first_call:  # a first burst asks once, rather than filling the generator's queue
                if self._answerer is None:
                    self._answerer = await self._new_answerer()
        return self._answerer

    async def _new_answerer(self) -> Answerer:
        retry = self.cfg.deployments.ingress.retry_after_s
        try:  # the model digest keys the generation cache: ask the generator once
            self.model_info = await self.generator.info.remote()
        except BackPressureError as e:
            raise backpressure(retry, "generator", e.message) from e
        except DeploymentUnavailableError as e:
            raise unavailable(retry, "generator") from e
        store = None
        if self.cfg.cache.generations:
            from biorab.paths import cache_dir

            store = thread_safe(GenerationStore(default_store_paths(cache_dir(self.cfg.cache.dir))[1]))
        return Answerer(self.cfg, self.parts, self.retriever, self.generator, self.model_info["model_digest"],
                        store, admissions=self.admissions)

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
            raise refusal(retry, e) from e
        except DeadlineExceeded as e:  # queued work was dropped; the client may retry elsewhere/later
            raise deadline_passed(retry, scope) from e
        except RequestCancelled as e:  # the client is gone: nobody reads this answer
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

    async def _answer(self, text: str, *, scope: RequestScope, fields: dict[str, Any] | None = None,
                      example_id: str | None = None, k: int | None = None, labels: list[str] | None = None,
                      sampling: dict[str, Any] | None = None) -> tuple[Answer, Timings]:
        answerer = await self.answerer()
        example = answering.example_of(self.cfg, answerer.task, text, fields or {},
                                       example_id or scope.request_id)
        answer, timings = await self._in_thread(functools.partial(
            answerer.answer, example, k=k, labels=labels, sampling=sampling), scope)
        self.metrics.observe(answer, timings)
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
            await asyncio.wait_for(self.answerer(), timeout=5)
            if self.retriever is not None:
                await asyncio.wait_for(self.retriever.ready.remote(), timeout=5)
        except (TimeoutError, BackPressureError, DeploymentUnavailableError):
            return JSONResponse({"status": "not ready"}, status_code=503, headers={"Retry-After": "5"})
        return JSONResponse({"status": "ready", "model": self.cfg.name})

    # -- API ------------------------------------------------------------------------------------------

    @api.get("/v1/models")
    async def models(self) -> dict[str, Any]:
        await self.answerer()
        info = self.model_info
        return {"object": "list", "data": [{
            "id": self.cfg.name, "object": "model", "created": 0, "owned_by": "biorab",
            "biorab": {"base_model": info["base_model"], "adapter": info["adapter"],
                       "adapter_version": info["adapter_version"], "backend": info["backend"],
                       "dataset": self.cfg.dataset, "task": self._answerer.task if self._answerer else None,
                       "retrieval": self.cfg.retrieval.model_dump(mode="json")}}]}

    @api.post("/v1/retrieve")
    async def retrieve(self, body: RetrieveRequest, request: Request) -> dict[str, Any]:
        self._check_input(body.input, "input")
        answerer = await self.answerer()
        if not self.cfg.retrieval.retrieves:
            raise ApiError(422, "this RAL does not retrieve (testbed 'none')")
        answering.check_scope(self.cfg, answerer.task, req_task=None, req_dataset=None, labels=None, k=body.k)
        hits, timings = await self._in_thread(functools.partial(answerer.retrieve, body.input, body.k),
                                              self.scope(request))
        return {"request_id": request.state.request_id, "evidence": answering.evidence(hits),
                "timings_ms": {"retrieval": round(timings.retrieval_s * 1000, 3)}}

    @api.post("/v1/ral")
    async def ral(self, body: RALRequest, request: Request) -> dict[str, Any]:
        started = time.perf_counter()
        self._check_input(body.input, "input")
        answerer = await self.answerer()
        answering.check_scope(self.cfg, answerer.task, req_task=body.task, req_dataset=body.dataset,
                              labels=body.labels, k=body.k)
        rid = request.state.request_id
        answer, timings = await self._answer(body.input, scope=self.scope(request), fields=body.fields,
                                             example_id=body.id, k=body.k, labels=body.labels)
        return {**self._described(answer, timings, started, rid),
                "generation": answering.generation(answer), "prompt": answer.prompt.text}

    @api.post("/v1/chat/completions", response_model=None)
    async def chat(self, body: ChatRequest, request: Request) -> JSONResponse | StreamingResponse:
        started = time.perf_counter()
        if body.model != self.cfg.name:
            raise ApiError(404, f"model {body.model!r} is not served here; GET /v1/models lists "
                                f"{self.cfg.name!r}", param="model")
        text = body.last_user_text()
        self._check_input(text, "messages")
        rid = request.state.request_id
        answer, timings = await self._answer(text, scope=self.scope(request), sampling=body.sampling_update())
        extension = self._described(answer, timings, started, rid)
        if body.stream:
            return StreamingResponse(self._sse(answer, extension, rid), media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache"})
        return JSONResponse(chat_completion(answer, self.cfg.name, rid, extension))

    async def _sse(self, answer: Answer, extension: dict[str, Any], rid: str) -> AsyncIterator[str]:
        for data in chat_chunk(answer, self.cfg.name, rid, extension):
            yield data

    def _described(self, answer: Answer, timings: Timings, started: float, rid: str) -> dict[str, Any]:
        info = self.model_info
        return {
            "request_id": rid, "id": answer.example_id, "model": self.cfg.name,
            "base_model": info["base_model"], "adapter": info["adapter"],
            "adapter_version": info["adapter_version"], "task": self._task(),
            "dataset": self.cfg.dataset, "label": answer.prediction.label,
            "prediction": answering.prediction(answer), "evidence": answering.evidence(answer.hits),
            "awareness": answering.awareness(answer),
            "timings_ms": {"retrieval": round(timings.retrieval_s * 1000, 3),
                           "generation": round(timings.generation_s * 1000, 3),
                           "total": round((time.perf_counter() - started) * 1000, 3)},
        }

    def _task(self) -> str | None:
        return self._answerer.task if self._answerer else None

    def admission_stats(self) -> dict[str, dict[str, int | None]]:
        """Calls in flight and refused per deployment behind this replica (tests and benches)."""
        return {name: {"in_flight": a.in_flight, "refused": a.refused, "limit": a.limit}
                for name, a in self.admissions.items()}

    def __del__(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None:
            pool.shutdown(wait=False)

