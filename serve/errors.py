"""HTTP errors of the API, in OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``.

Messages say what to fix; they never carry a stack trace, a file path or an exception's repr.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error response: HTTP `status`, a message for the caller, and optional headers."""

    def __init__(self, status: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param = status, message, type, param
        self.headers = headers or {}

    def body(self, request_id: str) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param,
                          "code": self.status, "request_id": request_id}}


#: The validation error type of text that is not valid Unicode (`serve.schemas.NOT_UNICODE`): the body is
#: not a well-formed request at all, so 400 (as OpenAI answers it), not 422.
NOT_UNICODE = "not_unicode"


def validation_error(errors: list[Any]) -> ApiError:
    """422 from FastAPI's validation errors, naming the first bad field (``messages.0.role``); 400 for
    text that is not valid Unicode."""
    first = errors[0] if errors else {}
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    if first.get("type") == NOT_UNICODE:
        field = str(first.get("ctx", {}).get("field", "body"))
        return ApiError(400, f"field '{field}': {first.get('msg', 'not valid Unicode text')}{more}",
                        param=field)
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path", "header")]
    field = ".".join(loc) or "body"
    msg = str(first.get("msg", "invalid request"))
    return ApiError(422, f"field '{field}': {msg}{more}", param=field)


def unauthorized() -> ApiError:
    return ApiError(401, "missing or invalid API key: send 'Authorization: Bearer <key>'",
                    type="authentication_error", headers={"WWW-Authenticate": "Bearer"})


def too_large(size: int, limit: int) -> ApiError:
    return ApiError(413, f"request body of {size} bytes exceeds the limit of {limit} bytes")


#: Header naming why a 503 was sent, one cause per path, so that a client, a bench or a test can tell
#: them apart (the message says it in words).
REFUSAL_HEADER = "X-BioRAB-Refusal"


def _refusal(message: str, cause: str, retry_after_s: float, **headers: str) -> ApiError:
    return ApiError(503, message, type="overloaded_error",
                    headers={"Retry-After": _seconds(retry_after_s), REFUSAL_HEADER: cause, **headers})


def queue_full(retry_after_s: float, deployment: str, in_flight: int, limit: int) -> ApiError:
    """503 at once: this ingress replica already has the deployment's whole room in flight
    (`serve.admission`)."""
    return _refusal(f"the {deployment} queue is full ({in_flight} calls in flight, limit {limit}); "
                    "retry later", "queue-full", retry_after_s)


def backpressure(retry_after_s: float, deployment: str, detail: str) -> ApiError:
    """503 at once: Serve's own router refused a call to `deployment` (its ``max_queued_requests``)."""
    return _refusal(f"the {deployment} deployment refused the call (Serve backpressure: {detail}); retry "
                    "later", "serve-backpressure", retry_after_s)


def unavailable(retry_after_s: float, deployment: str) -> ApiError:
    """503: Serve says `deployment` failed to deploy (an operator has to look at its replica log)."""
    return _refusal(f"the {deployment} deployment is unavailable (it failed to deploy); retry later",
                    "unavailable", retry_after_s)


def deadline_passed(retry_after_s: float, scope: Any) -> ApiError:
    """503: the request's deadline (the server's, or the client's own timeout) passed before the model
    answered; its queued work was dropped."""
    given = "" if scope.seconds is None else f" of {scope.seconds:.1f} s"
    return _refusal(f"not answered within this request's deadline{given} (request {scope.request_id}); "
                    "its queued work was dropped; retry later", "deadline", retry_after_s)


def client_gone(retry_after_s: float) -> ApiError:
    """503 for a request whose client went away (nobody reads it; its calls were cancelled)."""
    return _refusal("the request was cancelled (the client disconnected)", "cancelled", retry_after_s)


def stopping(retry_after_s: float) -> ApiError:
    """503 while the server drains before it stops."""
    return _refusal("the server is stopping; retry on another replica or later", "stopping", retry_after_s,
                    Connection="close")


def _seconds(s: float) -> str:
    return str(max(1, round(s)))


def internal(request_id: str) -> ApiError:
    return ApiError(500, f"internal error; quote request id {request_id} to the operator",
                    type="server_error")
