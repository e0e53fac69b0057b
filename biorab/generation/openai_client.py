"""The ``openai`` backend: any OpenAI-compatible server (vLLM's, Ray Serve LLM, hosted APIs).

Plain stdlib HTTP (`urllib`), so the backend needs no client library. One HTTP request per prompt
(``/v1/completions``, or ``/v1/chat/completions`` with ``chat: true``), sent by a bounded thread pool
(`concurrency`). Each attempt is bounded by `timeout_s` of wall-clock time, however slowly the server
sends its answer. Each request is retried on HTTP 5xx/408/409/429, timeouts, connection errors and
malformed or incomplete JSON, with exponential backoff and full jitter, at most `max_retries` times; a
server's ``Retry-After`` (seconds) is honoured up to `retry_after_max_s`. A row that still fails comes back as
``Generation(text="", error=...)``: rows are never lost, never duplicated, and keep the input order.
Stop strings are sent to the server and applied again to the returned text (some servers ignore them).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any, Literal, TypeVar
from urllib.parse import urlparse

from pydantic import Field

from biorab.errors import BackendError, ConfigError
from biorab.generation.base import SamplingParams, stable_digest, truncate_at_stop
from biorab.generation.capabilities import Capabilities
from biorab.generation.http_deadline import Deadline, open_with_deadline
from biorab.generation.openai_label_logprobs import echo_body, label_logprob
from biorab.params import Params as BaseParams
from biorab.records import Generation, Prompt

T = TypeVar("T")
_RETRY_STATUS = frozenset({408, 409, 429})
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})


class RetryableError(Exception):
    """A failure worth another attempt (server error, timeout, bad payload)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class FatalRequestError(Exception):
    """A failure that another attempt would repeat (a 4xx such as a bad request or bad key)."""


class OpenAIBackend:
    """Client of an OpenAI-compatible completions server (see the module docstring).

    Its `capabilities` are those of a client: the server owns the model (no local weights, nothing to
    defer) and whatever prefix cache it has.

    Params:
        base_url: the server's ``/v1`` URL.
        model: the model name the server knows.
        chat: use ``/chat/completions`` with the prompt as one user message (default raw completions,
            which suit few-shot prompts with a stop sequence).
        api_key_env: environment variable holding the API key. If it is unset, a loopback server gets a
            dummy key (local vLLM servers need none); any other server is a `ConfigError`.
        timeout_s: wall-clock limit of one attempt (connect, send, wait and read the whole answer).
        max_retries: retries per row after the first attempt.
        backoff_s / backoff_max_s: first retry delay and its cap (doubling, full jitter).
        retry_after_max_s: the longest ``Retry-After`` honoured; a server asking for more waits this long
            (the wait is never shorter than the server asked for, up to this ceiling).
        concurrency: requests in flight at once.
        structured_outputs: how to send a prompt's constraint when `SamplingParams.constrained` is set:
            ``vllm`` (``structured_outputs: {choice|regex}``, vLLM >= 0.12), ``vllm_legacy``
            (``guided_choice``/``guided_regex``), or ``off`` (servers without structured outputs).
        label_scoring: ``echo`` fills `Generation.label_logprobs` when `score_labels` is set, with one
            echo/logprobs request per label (completions servers that support it, e.g. vLLM); ``off``
            leaves them None. A row whose scoring fails keeps its text and gets `error` set.
        extra_body: extra JSON fields merged into every request.
        model_revision: recorded in `model_digest`, to tell apart server models that share a name.
    """

    capabilities = Capabilities()

    class Params(BaseParams):
        base_url: str = "https://api.openai.com/v1"
        model: str
        chat: bool = False
        api_key_env: str = "OPENAI_API_KEY"
        timeout_s: float = Field(default=60.0, gt=0)
        max_retries: int = Field(default=4, ge=0, le=20)
        backoff_s: float = Field(default=0.5, ge=0)
        backoff_max_s: float = Field(default=20.0, ge=0)
        retry_after_max_s: float = Field(default=120.0, ge=0)
        concurrency: int = Field(default=8, ge=1, le=256)
        structured_outputs: Literal["off", "vllm", "vllm_legacy"] = "off"
        label_scoring: Literal["off", "echo"] = "off"
        extra_body: dict[str, Any] = Field(default_factory=dict)
        model_revision: str | None = None

    def __init__(self, params: OpenAIBackend.Params) -> None:
        self.params = params
        self._headers = {"Authorization": f"Bearer {self._api_key()}", "Content-Type": "application/json"}
        self._base_url = params.base_url.rstrip("/")
        self._pool: ThreadPoolExecutor | None = ThreadPoolExecutor(
            max_workers=params.concurrency, thread_name_prefix="biorab-openai"
        )
        self._rng = random.Random()

    def _api_key(self) -> str:
        key = os.environ.get(self.params.api_key_env)
        if key:
            return key
        if urlparse(self.params.base_url).hostname in _LOOPBACK:
            return "EMPTY"
        raise ConfigError(
            f"${self.params.api_key_env} is not set; export the API key for {self.params.base_url}",
            key="backend.params.api_key_env",
        )

    @property
    def model_digest(self) -> str:
        return self.params_digest(self.params)

    @staticmethod
    def params_digest(p: OpenAIBackend.Params) -> str:
        """The cache digest of a client with params `p` (`biorab.generation.model_info` asks it too)."""
        return stable_digest({"backend": "openai", "base_url": p.base_url, "model": p.model,
                              "revision": p.model_revision, "chat": p.chat})  # fmt: skip

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order; failed rows carry `error`."""
        if self._pool is None:
            raise BackendError("openai backend used after close()")
        return list(self._pool.map(lambda prompt: self._generate_one(prompt, params), prompts))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _generate_one(self, prompt: Prompt, params: SamplingParams) -> Generation:
        path = "/chat/completions" if self.params.chat else "/completions"
        stops = params.stops_for(prompt)
        gen, error = self._call(path, self._body(prompt, params), lambda payload: self._parse(payload, stops))
        if gen is None:
            return Generation(text="", error=error)
        choices = prompt.constraint.choices if prompt.constraint else None
        if params.score_labels and choices and self.params.label_scoring == "echo" and not self.params.chat:
            scores, error = self._score_labels(prompt, choices)
            gen = replace(gen, label_logprobs=scores) if scores is not None else replace(gen, error=error)
        return gen

    def _score_labels(self, prompt: Prompt, labels: Sequence[str]) -> tuple[dict[str, float] | None, str]:
        scores: dict[str, float] = {}
        for label in labels:
            body = echo_body(self.params.model, prompt.text, label, self.params.extra_body)
            value, error = self._call("/completions", body, partial(_echo_score, prompt=prompt, label=label))
            if value is None:
                return None, f"label scoring of {label!r} {error}"
            scores[label] = value
        return scores, ""

    def _call(
        self, path: str, body: dict[str, Any], parse: Callable[[dict[str, Any]], T]
    ) -> tuple[T | None, str]:
        """POST with retries; returns (parsed result, "") or (None, "failed after N attempt(s): ...")."""
        errors: list[str] = []
        for attempt in range(self.params.max_retries + 1):
            try:
                return parse(self._post(path, body)), ""
            except FatalRequestError as e:
                errors.append(str(e))
                break
            except RetryableError as e:
                errors.append(str(e))
                if attempt < self.params.max_retries:
                    time.sleep(self._delay(attempt, e.retry_after))
        return None, f"failed after {len(errors)} attempt(s): {errors[-1]}"

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        cap = min(self.params.backoff_max_s, self.params.backoff_s * 2**attempt)
        delay = self._rng.uniform(0, cap)  # full jitter: concurrent retries do not stampede together
        # The server knows its own load: wait at least what it asks, bounded so one header cannot stall a run.
        return max(delay, min(retry_after or 0.0, self.params.retry_after_max_s))

    def _body(self, prompt: Prompt, params: SamplingParams) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.params.model,
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "seed": params.seed,
        }
        stops = params.stops_for(prompt)
        if stops:
            body["stop"] = list(stops)
        if self.params.chat:
            body["messages"] = [{"role": "user", "content": prompt.text}]
        else:
            body["prompt"] = prompt.text
        if params.constrained and prompt.constraint is not None:
            body.update(_structured_fields(self.params.structured_outputs, prompt))
        body.update(self.params.extra_body)
        return body

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self._base_url + path, data=json.dumps(body).encode("utf-8"), headers=self._headers, method="POST"
        )
        deadline = Deadline(self.params.timeout_s).start()
        try:
            data = self._send(request, deadline)
        except RetryableError:
            if deadline.expired:
                raise RetryableError(f"timeout after {self.params.timeout_s} s") from None
            raise
        finally:
            deadline.cancel()
        if deadline.expired:  # the read may have ended early, on the shut-down socket
            raise RetryableError(f"timeout after {self.params.timeout_s} s")
        try:
            payload = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise RetryableError(f"malformed JSON in the response: {e}") from e
        if not isinstance(payload, dict):
            raise RetryableError(f"response is not a JSON object: {str(payload)[:200]}")
        return payload

    def _send(self, request: urllib.request.Request, deadline: Deadline) -> bytes:
        try:
            with open_with_deadline(request, deadline) as response:
                data: bytes = response.read()
                return data
        except urllib.error.HTTPError as e:
            status, detail = e.code, e.read()[:200].decode("utf-8", "replace")
            if status >= 500 or status in _RETRY_STATUS:
                retry_after = _retry_after(e.headers.get("Retry-After"))
                raise RetryableError(f"HTTP {status}: {detail}", retry_after) from e
            raise FatalRequestError(f"HTTP {status}: {detail}") from e
        except TimeoutError as e:
            raise RetryableError(f"timeout after {self.params.timeout_s} s") from e
        except (urllib.error.URLError, http.client.HTTPException, ConnectionError, OSError) as e:
            if isinstance(getattr(e, "reason", None), TimeoutError):
                raise RetryableError(f"timeout after {self.params.timeout_s} s") from e
            raise RetryableError(f"connection error: {type(e).__name__}: {e}") from e

    def _parse(self, payload: dict[str, Any], stops: tuple[str, ...]) -> Generation:
        try:
            choice = payload["choices"][0]
            raw = choice["message"]["content"] if self.params.chat else choice["text"]
        except (KeyError, IndexError, TypeError) as e:
            raise RetryableError(f"response without choices[0] text: {str(payload)[:200]}") from e
        text, hit = truncate_at_stop(raw or "", stops)
        usage = payload.get("usage") or {}
        return Generation(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason="stop" if hit else choice.get("finish_reason"),
        )


def _structured_fields(style: str, prompt: Prompt) -> dict[str, Any]:
    """Extra request fields that restrict the answer to the prompt's constraint (vLLM servers)."""
    constraint = prompt.constraint
    if style == "off" or constraint is None:
        return {}
    spec: dict[str, Any] = (
        {"choice": list(constraint.choices)} if constraint.choices else {"regex": constraint.regex}
    )
    if style == "vllm":
        return {"structured_outputs": spec}
    return {f"guided_{key}": value for key, value in spec.items()}


def _echo_score(payload: dict[str, Any], prompt: Prompt, label: str) -> float:
    try:
        return label_logprob(payload, prompt.text, label)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise RetryableError(f"response without echoed log-probs: {e}") from e


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date; the exponential backoff applies instead
