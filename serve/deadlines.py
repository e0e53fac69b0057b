"""Request deadlines and cancellation across the ingress's worker thread and the deployments behind it.

Every request gets a deadline when it enters the ingress: the server's ``http.request_timeout_s``,
shortened by the client's own timeout where it sends one (the official ``openai`` Python client sends its
read timeout as ``X-Stainless-Read-Timeout``) less ``http.deadline_margin_s``, so that the server answers
503 before the client gives up. The ingress runs the RAL core in a worker thread; a `RequestScope` set
there (a context variable) lets the deployment clients wait for their calls only until the deadline, and
lets the ingress cancel them when the client disconnects. A cancelled call that is still queued in the
generator is never batched (Serve drops cancelled batch items; `serve.generator` counts them).
"""

from __future__ import annotations

import contextvars
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

#: Headers in which clients state how long they will wait, in seconds (first found wins). The ``openai``
#: package (3.x) sends ``X-Stainless-Read-Timeout: <read timeout>``; ``X-Request-Timeout`` is for others.
TIMEOUT_HEADERS = ("x-stainless-read-timeout", "x-stainless-timeout", "x-request-timeout")
#: How often a worker thread blocked on a deployment call looks at its scope's cancel flag.
POLL_S = 0.5


class DeadlineExceeded(Exception):
    """The request's deadline passed before a deployment answered (the ingress answers 503)."""


class RequestCancelled(Exception):
    """The client went away (or the server is stopping); the request's calls were cancelled."""


def client_timeout_s(headers: Mapping[str, str]) -> float | None:
    """The client's own timeout from its headers (``None``: none given or not a positive number)."""
    for name in TIMEOUT_HEADERS:
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value)
        except ValueError:
            continue
        if seconds > 0:
            return seconds
    return None


def budget_s(request_timeout_s: float | None, client_s: float | None, margin_s: float) -> float | None:
    """Seconds a request may take: the server's timeout, or the client's less `margin_s` when shorter
    (at least half the client's timeout, so that a short timeout is not eaten by the margin)."""
    client = None if client_s is None else max(client_s - margin_s, client_s / 2)
    candidates = [s for s in (request_timeout_s, client) if s is not None]
    return min(candidates) if candidates else None


@dataclass
class RequestScope:
    """One request's id, deadline (``time.monotonic()``; ``None``: none), the seconds it was given, and
    cancel flag."""

    request_id: str
    deadline: float | None = None
    cancelled: threading.Event = field(default_factory=threading.Event)
    seconds: float | None = None

    @classmethod
    def starting_now(cls, request_id: str, seconds: float | None) -> RequestScope:
        return cls(request_id, None if seconds is None else time.monotonic() + seconds, seconds=seconds)

    def remaining_s(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    def ticket(self) -> dict[str, Any]:
        """What a deployment call carries: the id and the seconds left (clocks of nodes may differ)."""
        return {"request_id": self.request_id, "timeout_s": self.remaining_s()}

    def wait(self, response: Any) -> Any:
        """The result of a `DeploymentResponse`, waited for until the deadline or a cancel; either one
        cancels the call (a queued call is then never run) and raises."""
        while True:
            if self.cancelled.is_set():
                response.cancel()
                raise RequestCancelled(self.request_id)
            left = self.remaining_s()
            if left is not None and left <= 0:
                response.cancel()
                raise DeadlineExceeded(self.request_id)
            step = POLL_S if left is None else min(POLL_S, left)
            try:
                return response.result(timeout_s=step)
            except TimeoutError:  # Ray's GetTimeoutError is one too
                continue


@dataclass
class Ticket:
    """One call's request id and deadline (``time.monotonic()`` of this replica), whether its prompts
    reached the backend, and the adapter its RAL names (several RALs on one engine; `serve.adapters`)."""

    request_id: str = ""
    deadline: float | None = None
    started: bool = False
    adapter: str | None = None
    #: Unique per call: the request id is the client's ``X-Request-ID`` when it sends one, so two clients
    #: (or a request's answer and probe calls) may share it; see `engine_key`.
    call: str = field(default_factory=lambda: uuid.uuid4().hex[:16])

    @property
    def engine_key(self) -> str:
        """This call's name in an engine that batches continuously (vLLM's request owner, and what an
        abort names): the request id namespaced by the call, so that equal client ids never share, or
        cancel, each other's engine requests."""
        return f"{self.request_id}#{self.call}" if self.request_id else self.call

    @classmethod
    def of(cls, ticket: dict[str, Any] | None) -> Ticket:
        if not ticket:
            return cls()
        timeout = ticket.get("timeout_s")
        deadline = None if timeout is None else time.monotonic() + timeout
        return cls(str(ticket.get("request_id") or ""), deadline)

    def expired(self, now: float) -> bool:
        return self.deadline is not None and now >= self.deadline


_CURRENT: contextvars.ContextVar[RequestScope | None] = contextvars.ContextVar("biorab_request_scope",
                                                                              default=None)


def current() -> RequestScope | None:
    """The scope of the request this thread serves (``None`` outside a request: benches, tests)."""
    return _CURRENT.get()


def run_in_scope(scope: RequestScope, fn: Callable[[], T]) -> T:
    """Call `fn` with `scope` current (in the worker thread that runs the RAL core)."""
    token = _CURRENT.set(scope)
    try:
        return fn()
    finally:
        _CURRENT.reset(token)


def wait_for(response: Any) -> Any:
    """`RequestScope.wait` in the current scope; outside one, a plain blocking ``result()``."""
    scope = current()
    return response.result() if scope is None else scope.wait(response)


def ticket() -> dict[str, Any] | None:
    scope = current()
    return None if scope is None else scope.ticket()
