"""The FastAPI app's cross-cutting layer: request ids, API keys, the body size limit, and error bodies.

One middleware wraps every route, so that no response (not even an unexpected failure) leaves without an
``X-Request-ID`` header, and none carries a stack trace or a file path.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from serve.auth import KeyCheck
from serve.errors import ApiError, internal, too_large, unauthorized, validation_error

log = logging.getLogger("ray.serve")

#: Routes a load balancer or orchestrator probes without a key.
PUBLIC_PATHS = frozenset({"/healthz", "/readyz"})
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


@dataclass
class Guard:
    """Per-replica settings of the middleware (set by the ingress replica when it starts), and the
    replica's request counts for a graceful stop: `open` requests now; once `stopping` is set (the error
    every new request but the probes gets), how many were `refused` and how many open ones `finished`."""

    keys: KeyCheck | None
    max_body_bytes: int
    on_response: Callable[[str, int], None] = lambda route, status: None
    stopping: ApiError | None = None
    open: int = 0
    refused: int = 0
    finished: int = 0

    def stats(self) -> dict[str, int]:
        return {"in_flight": self.open, "drained": self.finished, "refused": self.refused}


GUARD: dict[str, Guard] = {}


def request_id(offered: str | None) -> str:
    """The client's ``X-Request-ID`` when it is a plain token, else a fresh one."""
    return offered if offered and _CLIENT_ID.match(offered) else uuid.uuid4().hex


def error_response(error: ApiError, rid: str) -> JSONResponse:
    return JSONResponse(error.body(rid), status_code=error.status, headers=error.headers)


def install(api: FastAPI) -> None:
    """Register the middleware and the error handlers on `api`."""

    @api.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> Response:
        return error_response(exc, getattr(request.state, "request_id", ""))

    @api.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        # FastAPI's own 404 (no such route) and 405 (wrong method), in OpenAI's error shape too.
        error = ApiError(exc.status_code, str(exc.detail), headers=dict(exc.headers or {}))
        return error_response(error, getattr(request.state, "request_id", ""))

    @api.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        return error_response(validation_error(list(exc.errors())), getattr(request.state, "request_id", ""))

    @api.middleware("http")
    async def _guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        rid = request_id(request.headers.get("x-request-id"))
        request.state.request_id = rid
        started = time.perf_counter()
        guard = GUARD.get("guard")
        counted = guard is not None and request.url.path not in PUBLIC_PATHS  # probes are not requests
        if counted and guard is not None and guard.stopping is not None:
            guard.refused += 1
            return error_response(guard.stopping, rid)
        if counted and guard is not None:
            guard.open += 1
        try:
            await _admit(request, guard)
            response = await call_next(request)
        except ApiError as e:
            response = error_response(e, rid)
        except Exception:  # the caller gets the request id; the trace goes to the replica log only
            log.exception("request %s failed", rid)
            response = error_response(internal(rid), rid)
        finally:
            if counted and guard is not None:
                guard.open -= 1
                guard.finished += guard.stopping is not None
        # Serve's proxy put `rid` into the request headers (the client's, or a fresh one) and echoes it as
        # the response's X-Request-ID; set it here too only when running without the proxy.
        if "x-request-id" not in request.headers:
            response.headers["X-Request-ID"] = rid
        elapsed = (time.perf_counter() - started) * 1000
        log.info("request_id=%s %s %s -> %d in %.1f ms", rid, request.method, request.url.path,
                 response.status_code, elapsed)
        if guard is not None:
            guard.on_response(request.url.path, response.status_code)
        return response


async def _admit(request: Request, guard: Guard | None) -> None:
    """401 without a valid key (public probes excepted), 413 for a body over the limit."""
    if guard is None:
        return
    public = request.url.path in PUBLIC_PATHS
    if guard.keys is not None and not public and not guard.keys.accepts(request.headers.get("authorization")):
        raise unauthorized()
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > guard.max_body_bytes:
        raise too_large(int(declared), guard.max_body_bytes)
    if request.method in ("POST", "PUT", "PATCH") and declared is None:  # chunked: count what arrives
        request._body = await read_capped(request, guard.max_body_bytes)  # what the route then reads


async def read_capped(request: Request, limit: int) -> bytes:
    """The body of a request without ``Content-Length``, read as it arrives and refused (413) as soon as
    it passes `limit`: what is past the limit is never read into memory."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"request body exceeds the limit of {limit} bytes (stopped reading at "
                                f"{size} bytes)")
        chunks.append(chunk)
    return b"".join(chunks)
