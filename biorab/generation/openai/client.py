"""The ``openai`` backend: any OpenAI-compatible server (vLLM's, Ray Serve LLM, OpenAI's API), through the
official ``openai`` client (`openai.AsyncOpenAI`).

The client does the HTTP: its retries (HTTP 408/409/429/5xx, timeouts, connection errors), its
``Retry-After`` parsing and its typed errors. On top, this backend keeps what the project guarantees:

- one request per prompt (``/v1/completions``, or ``/v1/chat/completions`` with ``chat: true``), at most
  `concurrency` in flight, rows back in input order, a row that fails for good kept as
  ``Generation(text="", error=...)``;
- a wall-clock limit on every attempt (`timeout_s`: connect, send, wait and read the whole answer, however
  slowly the server sends it; the client's own timeouts bound each read only). An attempt cut by it is a
  timeout, which the client retries;
- its backoff between attempts (full jitter under ``min(backoff_max_s, backoff_s * 2**n)``, or that bound
  plus a 0..`backoff_jitter_s` jitter, the DrugMech paper's 5-90 s + 0-10 s), at least the
  server's ``Retry-After`` up to `retry_after_max_s`; a 200 answer that is not a completion (bad JSON, no
  choices) is retried too, from the same budget of `max_retries`;
- structured outputs and echo label scoring for vLLM servers, reasoning-model request bodies
  (`biorab.generation.openai.params.request_body`), the reasoning apart from the answer, token counts;
- requests-per-minute and tokens-per-minute limits (`biorab.generation.openai.rate_limit`);
- an authentication, permission or quota error stops the whole call with one `BackendFatalError` (every
  other row would fail the same way), so the run stops and resumes later instead of writing error rows.

Stop strings are sent (except to reasoning models, which refuse them) and applied again to the answer.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlparse

import httpx2
import openai

from biorab.common.errors import BackendError, BackendFatalError, ConfigError
from biorab.common.records import Generation, Prompt
from biorab.generation.base import SamplingParams, truncate_at_stop
from biorab.generation.capabilities import Capabilities
from biorab.generation.openai.label_logprobs import echo_body, label_logprob
from biorab.generation.openai.params import OpenAIParams, check_sampling, params_digest, request_body
from biorab.generation.openai.rate_limit import RateLimiter
from biorab.generation.reasoning import split_reasoning

T = TypeVar("T")
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
#: Standard fields of each endpoint; the rest of a body (vLLM's structured outputs, `extra_body`) goes
#: through the client's ``extra_body``, so the wire body is exactly `request_body`'s.
_FIELDS = {
    "/completions": frozenset({"model", "prompt", "max_tokens", "temperature", "top_p", "seed", "stop",
                               "echo", "logprobs", "presence_penalty", "frequency_penalty"}),
    "/chat/completions": frozenset({"model", "messages", "max_tokens", "max_completion_tokens",
                                    "temperature", "top_p", "seed", "stop", "presence_penalty",
                                    "frequency_penalty", "reasoning_effort", "service_tier"}),
}
#: Attempts made by the current row (one list per row task; the HTTP client counts into it).
_ATTEMPTS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("biorab_openai_attempts")


class PayloadError(Exception):
    """A 200 answer that is not a usable completion (retried like a server error)."""


class _DeadlineClient(httpx2.AsyncClient):
    """Counts attempts and bounds each one's wall-clock time; an attempt past it is a read timeout, which
    the openai client retries like any other."""

    def __init__(self, seconds: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seconds = seconds

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        counter = _ATTEMPTS.get(None)
        if counter is not None:
            counter[0] += 1
        try:
            return await asyncio.wait_for(super().send(request, **kwargs), self._seconds)
        except TimeoutError:
            raise httpx2.ReadTimeout(f"timeout after {self._seconds} s", request=request) from None


class _Client(openai.AsyncOpenAI):
    """The official client with the backend's backoff schedule (see the module docstring). The params are
    a class attribute (`client_class`): ``with_options`` copies a client by calling its class."""

    _biorab: OpenAIParams
    _rng = random.Random()

    def _should_retry(self, response: httpx2.Response) -> bool:
        # OpenAI answers an exhausted quota with a 429 too; no retry fixes it (`_call` stops the run)
        return not _quota_exhausted(response) and super()._should_retry(response)

    def _calculate_retry_timeout(self, remaining_retries: int, options: Any, response_headers: Any = None
                                 ) -> float:
        return retry_delay(self._biorab, self._biorab.max_retries - remaining_retries,
                           self._parse_retry_after_header(response_headers), self._rng)


def client_class(params: OpenAIParams) -> type[_Client]:
    return type("BioRABOpenAI", (_Client,), {"_biorab": params, "_rng": random.Random()})


def retry_delay(params: OpenAIParams, attempt: int, retry_after: float | None, rng: random.Random) -> float:
    """Full jitter (concurrent retries do not stampede together), or with `backoff_jitter_s` the exponential
    delay itself plus a uniform 0..`backoff_jitter_s` (the DrugMech paper's tenacity wait: 5-90 s plus 0-10
    s); at least what the server asked for up to `retry_after_max_s` (the server knows its load; one header
    cannot stall a run).

    >>> p = OpenAIParams(model="m", backoff_s=5, backoff_max_s=90, backoff_jitter_s=10)
    >>> [0 <= retry_delay(p, n, None, random.Random(n)) - min(90, 5 * 2**n) <= 10 for n in range(6)]
    [True, True, True, True, True, True]
    """
    cap = min(params.backoff_max_s, params.backoff_s * 2**attempt)
    if params.backoff_jitter_s is not None:
        wait = cap + rng.uniform(0, params.backoff_jitter_s)
    else:
        wait = rng.uniform(0, cap)
    return max(wait, min(retry_after or 0.0, params.retry_after_max_s))


class OpenAIBackend:
    """Client of an OpenAI-compatible server (see the module docstring).

    Its `capabilities` are those of a client: the server owns the model (no local weights, nothing to
    defer) and whatever prefix cache it has.

    Params:
        base_url: the server's ``/v1`` URL.
        model: the model name the server knows.
        chat: use ``/chat/completions`` with the prompt as one user message (default raw completions,
            which suit few-shot prompts with a stop sequence). Reasoning models need it.
        api_key_env: environment variable holding the API key. If it is unset, a loopback server gets a
            dummy key (local vLLM servers need none); any other server is a `ConfigError`.
        timeout_s: wall-clock limit of one attempt (connect, send, wait and read the whole answer).
        max_retries: retries per row after the first attempt.
        backoff_s / backoff_max_s: first retry delay and its cap (doubling, full jitter).
        backoff_jitter_s: instead of full jitter, wait the doubling delay itself plus a uniform jitter of
            0 to this many seconds (``backoff_s: 5, backoff_max_s: 90, backoff_jitter_s: 10`` is the
            DrugMech paper's 5-90 s plus 0-10 s).
        retry_after_max_s: the longest ``Retry-After`` honoured (the client itself refuses to retry when a
            server asks for more than 120 s: the row then fails with that 429/503).
        concurrency: requests in flight at once.
        structured_outputs: how to send a prompt's constraint when `SamplingParams.constrained` is set:
            ``vllm`` (``structured_outputs: {choice|regex}``, vLLM >= 0.12), ``vllm_legacy``
            (``guided_choice``/``guided_regex``), or ``off`` (servers without structured outputs).
        label_scoring: ``echo`` fills `Generation.label_logprobs` when `score_labels` is set, with one
            echo/logprobs request per label (completions servers that support it, e.g. vLLM); ``off``
            leaves them None. A row whose scoring fails keeps its text and gets `error` set.
        extra_body: extra JSON fields merged into every request.
        model_revision: recorded in `model_digest`, to tell apart server models that share a name.
        reasoning: the model is an OpenAI reasoning model (None: decided by its name, o1/o3/o4/gpt-5).
        reasoning_effort: sent to reasoning models only (``minimal``/``low``/``medium``/``high``).
        service_tier: OpenAI's ``service_tier`` (``flex`` is the cheaper, slower tier), sent when set.
        token_limit: ``send`` sends `SamplingParams.max_tokens` (as ``max_completion_tokens`` to a
            reasoning model, else ``max_tokens``); ``omit`` sends no limit (the model's own).
        presence_penalty: sent when set.
        think_split: split ``<think>…</think>`` from a reply when the server has no reasoning parser (a
            server's ``reasoning_content`` is always kept apart).
        thinking_token_budget: the most tokens a thinking model may reason before it must answer, sent as
            vLLM's ``thinking_token_budget`` (vLLM >= 0.29 started with ``--reasoning-parser``; other
            servers refuse or ignore it).
        price: US dollars per million input/output tokens, for the cost in summary.json and `biorab plan`.
        max_output_tokens: the model's largest answer (read by `biorab plan` only, never sent): with
            ``token_limit: omit`` and no measured run it bounds the planned decode tokens and cost.
        requests_per_minute / tokens_per_minute: client-side rate limits (None: unlimited).
    """

    capabilities = Capabilities(server_client=True)

    Params = OpenAIParams

    def __init__(self, params: OpenAIParams) -> None:
        self.params = params
        key = self._api_key()
        self._loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = threading.Thread(
            target=self._loop.run_forever, name="biorab-openai", daemon=True)
        self._thread.start()
        self._client = self._call_soon(self._make_client(key))
        self._limiter = RateLimiter(params.requests_per_minute, params.tokens_per_minute)

    async def _make_client(self, key: str) -> _Client:
        p = self.params
        http = _DeadlineClient(p.timeout_s, timeout=httpx2.Timeout(p.timeout_s),
                               limits=httpx2.Limits(max_connections=p.concurrency,
                                                    max_keepalive_connections=p.concurrency))
        return client_class(p)(api_key=key, base_url=p.base_url, max_retries=p.max_retries,
                       timeout=p.timeout_s, http_client=http)

    def _call_soon(self, coro: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()  # type: ignore[arg-type]

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
        return params_digest(self.params)

    #: the cache digest of a client with given params (`biorab.generation.model_info` asks the class)
    params_digest = staticmethod(params_digest)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order; failed rows carry `error`.

        Raises:
            BackendFatalError: the server refused the key, the permission or the quota (no row is kept).
        """
        if self._thread is None:
            raise BackendError("openai backend used after close()")
        check_sampling(self.params, params)
        return self._call_soon(self._generate_all(prompts, params))

    def close(self) -> None:
        if self._thread is None:
            return
        self._call_soon(self._client.close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._thread = None
        self._loop.close()

    async def _generate_all(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        gate = asyncio.Semaphore(self.params.concurrency)

        async def one(prompt: Prompt) -> Generation:
            async with gate:
                return await self._generate_one(prompt, params)

        tasks = [asyncio.ensure_future(one(p)) for p in prompts]
        try:
            return list(await asyncio.gather(*tasks))
        except BackendFatalError:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _generate_one(self, prompt: Prompt, params: SamplingParams) -> Generation:
        path = "/chat/completions" if self.params.chat else "/completions"
        body = request_body(self.params, prompt, params)
        await self._limiter.acquire(_token_estimate(prompt.text, body))
        stops = params.stops_for(prompt)
        gen, error = await self._call(path, body, lambda payload: self._parse(payload, stops))
        if gen is None:
            return Generation(text="", error=error)
        self._limiter.record(gen.prompt_tokens + gen.completion_tokens)
        choices = prompt.constraint.choices if prompt.constraint else None
        if params.score_labels and choices and self.params.label_scoring == "echo" and not self.params.chat:
            scores, error = await self._score_labels(prompt, choices)
            gen = replace(gen, label_logprobs=scores) if scores is not None else replace(gen, error=error)
        return gen

    async def _score_labels(self, prompt: Prompt, labels: Sequence[str]
                            ) -> tuple[dict[str, float] | None, str]:
        scores: dict[str, float] = {}
        for label in labels:
            body = echo_body(self.params.model, prompt.text, label, self.params.extra_body)
            value, error = await self._call("/completions", body, partial(_echo_score, prompt=prompt,
                                                                          label=label))
            if value is None:
                return None, f"label scoring of {label!r} {error}"
            scores[label] = value
        return scores, ""

    async def _call(self, path: str, body: dict[str, Any], parse: Callable[[dict[str, Any]], T]
                    ) -> tuple[T | None, str]:
        """One request through the client (which retries transport and status failures), retried here
        when the answer is not a completion; returns (parsed, "") or (None, "failed after N attempt(s):
        …")."""
        attempts = [0]
        _ATTEMPTS.set(attempts)
        budget = self.params.max_retries + 1
        while True:
            malformed = False
            try:
                payload = await self._post(path, body, max(budget - attempts[0] - 1, 0))
                return parse(payload), ""
            except (PayloadError, openai.APIResponseValidationError, ValueError) as e:
                error, malformed = f"malformed response: {e}"[:300], True
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                raise BackendFatalError(_fatal_message(self.params, e)) from e
            except openai.RateLimitError as e:
                if e.code == "insufficient_quota":
                    raise BackendFatalError(_fatal_message(self.params, e)) from e
                error = _status_text(e)
            except openai.APIStatusError as e:
                error = _status_text(e)
            except openai.APITimeoutError:
                error = f"timeout after {self.params.timeout_s} s"
            except openai.APIConnectionError as e:
                cause = e.__cause__
                error = f"connection error: {type(cause).__name__ if cause else 'unknown'}: {cause}"
            # the client already retried what it retries; only a malformed answer is retried here
            if not malformed or attempts[0] >= budget:
                return None, f"failed after {max(attempts[0], 1)} attempt(s): {error}"
            await asyncio.sleep(retry_delay(self.params, attempts[0] - 1, None, self._client._rng))

    async def _post(self, path: str, body: dict[str, Any], retries: int) -> dict[str, Any]:
        fields = _FIELDS[path]
        known = {k: v for k, v in body.items() if k in fields}
        extra = {k: v for k, v in body.items() if k not in fields}
        client = self._client.with_options(max_retries=retries)
        chat = path == "/chat/completions"
        create: Any = client.chat.completions.create if chat else client.completions.create
        response = await create(**known, extra_body=extra or None)
        payload = response.model_dump(exclude_unset=True) if hasattr(response, "model_dump") else response
        if not isinstance(payload, dict):
            raise PayloadError(f"response is not a JSON object: {str(payload)[:200]}")
        return payload

    def _parse(self, payload: dict[str, Any], stops: tuple[str, ...]) -> Generation:
        try:
            choice = payload["choices"][0]
            message = choice["message"] if self.params.chat else None
            raw = message["content"] if message is not None else choice["text"]
        except (KeyError, IndexError, TypeError) as e:
            raise PayloadError(f"response without choices[0] text: {str(payload)[:200]}") from e
        reasoning = (message.get("reasoning_content") or message.get("reasoning")) if message else None
        text = raw or ""
        if reasoning is None and self.params.think_split:
            reasoning, text = split_reasoning(text)
        text, hit = truncate_at_stop(text, stops)
        usage = payload.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        reasoning_tokens = details.get("reasoning_tokens")
        return Generation(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason="stop" if hit else choice.get("finish_reason"),
            reasoning=reasoning,
            reasoning_tokens=int(reasoning_tokens) if reasoning_tokens is not None else None,
        )


def _quota_exhausted(response: httpx2.Response) -> bool:
    if response.status_code != 429:
        return False
    try:
        error = response.json().get("error") or {}
    except (ValueError, httpx2.ResponseNotRead, AttributeError):
        return False
    return isinstance(error, dict) and error.get("code") == "insufficient_quota"


def _echo_score(payload: dict[str, Any], *, prompt: Prompt, label: str) -> float:
    try:
        return label_logprob(payload, prompt.text, label)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise PayloadError(f"response without echoed log-probs: {e}") from e


def _status_text(e: openai.APIStatusError) -> str:
    try:
        detail = e.response.text[:200]
    except (httpx2.ResponseNotRead, AttributeError):
        detail = e.message[:200]
    return f"HTTP {e.status_code}: {detail}"


def _fatal_message(params: OpenAIParams, e: openai.APIStatusError) -> str:
    what = {401: "refused the API key", 403: "refused the permission"}.get(e.status_code,
                                                                          "reports no quota left")
    return (f"{params.base_url} {what} for model {params.model} (HTTP {e.status_code}: {e.message}); "
            f"the run stopped before writing error rows: fix ${params.api_key_env} or the account, then "
            "run the same command again to resume")


def _token_estimate(prompt_text: str, body: dict[str, Any]) -> int:
    """Tokens a request may use, for the tokens-per-minute limit: ~4 characters a token plus the limit."""
    limit = body.get("max_completion_tokens") or body.get("max_tokens") or 0
    return len(prompt_text) // 4 + int(limit)
