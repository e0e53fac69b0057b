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


def validation_error(errors: list[Any]) -> ApiError:
    """422 from FastAPI's validation errors, naming the first bad field (``messages.0.role``)."""
    first = errors[0] if errors else {}
    loc = [str(p) for p in first.get("loc", ()) if p not in ("body", "query", "path", "header")]
    field = ".".join(loc) or "body"
    msg = str(first.get("msg", "invalid request"))
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    return ApiError(422, f"field '{field}': {msg}{more}", param=field)


def unauthorized() -> ApiError:
    return ApiError(401, "missing or invalid API key: send 'Authorization: Bearer <key>'",
                    type="authentication_error", headers={"WWW-Authenticate": "Bearer"})


def too_large(size: int, limit: int) -> ApiError:
    return ApiError(413, f"request body of {size} bytes exceeds the limit of {limit} bytes")


def overloaded(retry_after_s: float, what: str) -> ApiError:
    return ApiError(503, f"the {what} is at capacity; retry later", type="overloaded_error",
                    headers={"Retry-After": _seconds(retry_after_s)})


def deadline_passed(retry_after_s: float, scope: Any) -> ApiError:
    """503: the request's deadline (the server's, or the client's own timeout) passed before the model
    answered; its queued work was dropped."""
    return ApiError(503, f"not answered within this request's deadline; the model server is at capacity "
                         f"(request {scope.request_id}); retry later", type="overloaded_error",
                    headers={"Retry-After": _seconds(retry_after_s)})


def stopping(retry_after_s: float) -> ApiError:
    """503 while the server drains before it stops."""
    return ApiError(503, "the server is stopping; retry on another replica or later", type="overloaded_error",
                    headers={"Retry-After": _seconds(retry_after_s), "Connection": "close"})


def _seconds(s: float) -> str:
    return str(max(1, round(s)))


def internal(request_id: str) -> ApiError:
    return ApiError(500, f"internal error; quote request id {request_id} to the operator",
                    type="server_error")
