"""A fault-injecting OpenAI-compatible server for tests (stdlib `http.server`, 127.0.0.1, random port).

It answers ``POST /v1/completions`` and ``POST /v1/chat/completions`` with a deterministic text derived
from the prompt (``"re: <prompt>"``, cut at the request's stop strings, at most ``max_tokens`` words), and
injects faults on a schedule keyed by prompt text and attempt number, so the schedule is deterministic
even when the client sends requests concurrently:

    faults = {"prompt 3": ["500", "malformed"]}   # 1st attempt -> HTTP 500, 2nd -> bad JSON, 3rd -> OK

Fault kinds: ``"500"``/``"502"``/``"503"``/``"429"``/``"400"``/``"401"`` (that status with a JSON error body),
``"hang"`` (sleep `hang_s`, longer than the client's timeout, then answer), ``"malformed"`` (status 200,
a body that is not JSON), ``"no_choices"`` (valid JSON without ``choices``), ``"drop"`` (close the
connection without answering), ``"trickle"`` (status 200 and the full Content-Length, then the body one
byte every `trickle_s` seconds, as a stuck proxy or an overloaded server does). `retry_after` adds that
``Retry-After`` header to 429/503 answers; `delay_s` delays every answer; `max_in_flight` records the
most requests handled at once. Every request is appended to `log` (with its arrival time) so tests can
count attempts and time the backoff.
Requests with ``echo: true`` get per-token log-probs of the prompt (see `echo_logprob`), as vLLM returns
them, for label-scoring tests.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class LoggedRequest:
    path: str
    prompt: str
    attempt: int
    fault: str | None
    body: dict[str, Any]
    headers: dict[str, str]  # names lower-cased (HTTP header names are case-insensitive)
    at: float = 0.0  # time.monotonic() when the request arrived


@dataclass
class FaultServer:
    """Start with `start()` (or as a context manager); `base_url` is ``http://127.0.0.1:PORT/v1``."""

    faults: dict[str, list[str]] = field(default_factory=dict)
    hang_s: float = 2.0
    trickle_s: float = 0.1
    retry_after: str | None = None
    delay_s: float = 0.0
    model: str = "fault-model"
    log: list[LoggedRequest] = field(default_factory=list)
    #: chat answers carry this as ``reasoning_content`` (a vLLM server with a reasoning parser) and report
    #: its word count as ``completion_tokens_details.reasoning_tokens`` (as OpenAI's reasoning models do)
    reasoning: str | None = None
    #: chat answers are ``reply`` when set (e.g. a thinking model's ``<think>…</think>`` text)
    reply: str | None = None
    #: a 429 says ``code: insufficient_quota`` (OpenAI's "no quota left", which no retry fixes)
    quota_exhausted: bool = False
    #: a fault for every request (e.g. ``"401"``: a revoked key), whatever the schedule says
    always: str | None = None

    def __post_init__(self) -> None:
        self._attempts: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> FaultServer:
        handler = type("Handler", (_Handler,), {"owner": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True  # a hanging handler must not block shutdown
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def attempts(self, prompt: str) -> int:
        """How many requests arrived for `prompt`."""
        return sum(1 for r in self.log if r.prompt == prompt)

    def next_fault(self, prompt: str) -> tuple[int, str | None]:
        with self._lock:
            self._attempts[prompt] += 1
            attempt = self._attempts[prompt]
        if self.always is not None:
            return attempt, self.always
        schedule = self.faults.get(prompt, [])
        return attempt, schedule[attempt - 1] if attempt <= len(schedule) else None


def answer_for(prompt: str, stop: list[str], max_tokens: int) -> tuple[str, str]:
    """The server's deterministic answer and finish reason for `prompt`."""
    text = f"re: {prompt}"
    cuts = [i for i in (text.find(s) for s in stop if s) if i >= 0]
    if cuts:
        return text[: min(cuts)], "stop"
    words = text.split(" ")
    if len(words) > max_tokens:
        return " ".join(words[:max_tokens]), "length"
    return text, "stop"


def echo_logprob(token: str) -> float:
    """The server's log-prob of an echoed token: -0.1 per non-space character."""
    return -0.1 * len(token.strip())


def _echo(prompt: str) -> dict[str, Any]:
    """An ``echo`` + ``logprobs`` completion: whitespace-led word tokens, then one generated token."""
    tokens = [(m.start(), m.group()) for m in re.finditer(r"\s*\S+", prompt)]
    values: list[float | None] = [None] + [echo_logprob(t) for _, t in tokens[1:]] + [-1.0]
    logprobs = {
        "tokens": [t for _, t in tokens] + [" x"],
        "token_logprobs": values,
        "text_offset": [o for o, _ in tokens] + [len(prompt)],
        "top_logprobs": None,
    }
    choice = {"index": 0, "text": prompt + " x", "logprobs": logprobs, "finish_reason": "length"}
    return {"id": "cmpl-echo", "object": "text_completion", "choices": [choice]}


class _Handler(BaseHTTPRequestHandler):
    owner: FaultServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        return

    def do_POST(self) -> None:
        owner = self.owner
        with owner._lock:
            owner.in_flight += 1
            owner.max_in_flight = max(owner.max_in_flight, owner.in_flight)
        try:
            self._answer()
        finally:
            with owner._lock:
                owner.in_flight -= 1

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        chat = self.path.endswith("/chat/completions")
        if not chat and not self.path.endswith("/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        prompt = body["messages"][-1]["content"] if chat else body["prompt"]
        attempt, fault = self.owner.next_fault(prompt)
        with self.owner._lock:
            self.owner.log.append(LoggedRequest(self.path, prompt, attempt, fault, body,
                                                {k.lower(): v for k, v in self.headers.items()},
                                                time.monotonic()))
        if self.owner.delay_s:
            time.sleep(self.owner.delay_s)
        if fault == "drop":
            self.close_connection = True
            self.connection.close()
            return
        if fault == "hang":
            time.sleep(self.owner.hang_s)
        if fault and fault.isdigit():
            code = "insufficient_quota" if fault == "429" and self.owner.quota_exhausted else None
            self._send(int(fault), {"error": {"message": f"injected {fault}", "type": "server_error",
                                              "code": code}})
            return
        if fault == "trickle":
            self._trickle(json.dumps(self._completion(prompt, body, chat)).encode("utf-8"))
            return
        if fault == "malformed":
            self._send_raw(200, b'{"id": "cmpl-1", "choices": [{"text": "trunc')
            return
        if fault == "no_choices":
            self._send(200, {"id": "cmpl-1", "object": "text_completion"})
            return
        self._send(200, _echo(prompt) if body.get("echo") else self._completion(prompt, body, chat))

    def _completion(self, prompt: str, body: dict[str, Any], chat: bool) -> dict[str, Any]:
        stop = body.get("stop") or []
        stops = [stop] if isinstance(stop, str) else stop
        limit = body.get("max_tokens") or body.get("max_completion_tokens") or 10_000
        text, finish = answer_for(prompt, stops, int(limit))
        choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
        reasoning = self.owner.reasoning if chat else None
        if chat:
            text = self.owner.reply if self.owner.reply is not None else text
            choice["message"] = {"role": "assistant", "content": text}
            if reasoning is not None:
                choice["message"]["reasoning_content"] = reasoning
        else:
            choice["text"] = text
        thought = len(reasoning.split()) if reasoning else 0
        usage: dict[str, Any] = {"prompt_tokens": len(prompt.split()),
                                 "completion_tokens": len(text.split()) + thought}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if reasoning is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": thought}
        kind = "chat.completion" if chat else "text_completion"
        return {"id": "cmpl-x", "object": kind, "model": self.owner.model, "choices": [choice],
                "usage": usage}  # fmt: skip

    def _trickle(self, data: bytes) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                time.sleep(self.owner.trickle_s)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: what the test wants

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        self._send_raw(status, json.dumps(payload).encode("utf-8"))

    def _send_raw(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status in (429, 503) and self.owner.retry_after is not None:
                self.send_header("Retry-After", self.owner.retry_after)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to answer
