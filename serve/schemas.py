"""Request bodies of the HTTP API (FastAPI validates them: a bad body is a 422 that names the field).

`/v1/ral` and `/v1/retrieve` are ours, so unknown fields are errors; `/v1/chat/completions` follows the
OpenAI schema: ``stop`` is honoured, parameters that would change what the answer is (``tools``,
``response_format`` other than text, ``logprobs``...) are refused with 400 (`ChatRequest.unsupported`),
and other parameters it does not use are ignored, as OpenAI-compatible servers do.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

#: Request-supplied instance ids end up in logs and prompts (`Prompt.example_id`): keep them plain.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,127}$"
#: The largest seed every backend takes: torch's generator raises above 2^64 - 1 (inside the batch, which
#: failed every request batched with it), numpy's refuses negatives; int64 (OpenAI's ``seed``) fits.
SEED_MAX = 2**63 - 1
#: OpenAI's bound on a chat request's stop strings, and ours on their length.
MAX_STOPS = 4
MAX_STOP_CHARS = 100
#: The error type of text that is not valid Unicode (`serve.errors.validation_error` answers it 400).
NOT_UNICODE = "not_unicode"


def check_unicode(value: Any, where: str) -> None:
    """Raise for a lone surrogate anywhere in `value` (JSON's ``"\\ud800"`` decodes to one): such text
    cannot be encoded, so the tokenizer or the cache key would fail on it later."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise PydanticCustomError(NOT_UNICODE, "not valid Unicode text (a lone surrogate {char} at "
                                      "character {at})",
                                      {"field": where, "char": f"\\u{ord(value[e.start]):04x}",
                                       "at": e.start}) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_unicode(key, where)
            check_unicode(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            check_unicode(item, f"{where}.{i}")


class Unicode(BaseModel):
    """A request body whose every string is valid Unicode (checked before the fields are)."""

    @model_validator(mode="before")
    @classmethod
    def _unicode(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                check_unicode(value, str(key))
        return data


class Strict(Unicode):
    model_config = ConfigDict(extra="forbid")


class RALRequest(Strict):
    """One instance for the served RAL.

    Attributes:
        input: the instance's text (the retrieval query, and ``{text}`` of the template).
        fields: the template's other inputs (``question`` and ``options`` for MedMCQA...).
        task / dataset: optional; when given they must be the served RAL's.
        labels: answer in this label space instead of the template's (closed tasks).
        k: retrieved examples in the prompt (default: the serve config's).
        id: the instance id (default: the request id).
        model: which served RAL answers (``GET /v1/models``; default: the config's first).
    """

    model: str | None = None
    input: str = Field(min_length=1)
    fields: dict[str, Any] = Field(default_factory=dict)
    task: str | None = None
    dataset: str | None = None
    labels: list[str] | None = Field(default=None, min_length=1)
    k: int | None = Field(default=None, ge=1)
    id: str | None = Field(default=None, pattern=ID_PATTERN)


class RetrieveRequest(Strict):
    model: str | None = None
    input: str = Field(min_length=1)
    k: int | None = Field(default=None, ge=1)


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):  # content parts: keep the text ones
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(Unicode):
    """The OpenAI chat completion request; the last user message is the RAL's input. Every numeric field
    is bounded here (``max_tokens`` also by ``limits.max_tokens`` at the ingress)."""

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    seed: int | None = Field(default=None, ge=0, le=SEED_MAX)
    n: int = Field(default=1, ge=1, le=1)
    #: Up to 4 stop strings (OpenAI's bound), added to the served RAL's own.
    stop: str | list[str] | None = None
    tools: list[Any] | None = None
    tool_choice: Any = None
    functions: list[Any] | None = None
    function_call: Any = None
    response_format: dict[str, Any] | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = None

    @field_validator("stop")
    @classmethod
    def _stops(cls, stop: str | list[str] | None) -> str | list[str] | None:
        stops = [stop] if isinstance(stop, str) else stop or []
        if len(stops) > MAX_STOPS:
            raise ValueError(f"at most {MAX_STOPS} stop strings, not {len(stops)}")
        if any(not s or len(s) > MAX_STOP_CHARS for s in stops):
            raise ValueError(f"each stop string has 1 to {MAX_STOP_CHARS} characters")
        return stop

    def unsupported(self) -> str | None:
        """The first parameter set that this server cannot honour: a RAL answers in its own template's
        format, parsed by its own parser, with no tool calls or token log-probabilities."""
        if self.response_format is not None and self.response_format.get("type", "text") != "text":
            return "response_format"
        for name in ("tools", "tool_choice", "functions", "function_call", "top_logprobs"):
            if getattr(self, name) not in (None, []):
                return name
        return "logprobs" if self.logprobs else None

    @field_validator("messages")
    @classmethod
    def _has_user_message(cls, messages: list[ChatMessage]) -> list[ChatMessage]:
        if not any(m.role == "user" and m.text().strip() for m in messages):
            raise ValueError("needs at least one user message with text")
        return messages

    def last_user_text(self) -> str:
        return next(m.text() for m in reversed(self.messages) if m.role == "user" and m.text().strip())

    def sampling_update(self) -> dict[str, Any]:
        """The request's decoding parameters that override the serve config's sampling."""
        update: dict[str, Any] = {"max_tokens": self.max_completion_tokens or self.max_tokens,
                                  "temperature": self.temperature, "top_p": self.top_p, "seed": self.seed,
                                  "stop": (self.stop,) if isinstance(self.stop, str) else self.stop}
        return {k: (tuple(v) if k == "stop" else v) for k, v in update.items() if v is not None}
