"""Deadlines, cancellation and the drain protocol without a running Serve: the client's timeout header
shortens the server's, a blocked deployment call is cancelled at the deadline or on a disconnect, the
generator drops expired prompts before the backend sees them, and `drain` totals the replicas' reports.
Also the one status of docs/serve.md's limits table that needs a fault to produce: 500."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from biorab.common.records import Prompt
from biorab.generation.base import SamplingParams
from serve.deadlines import (
    DeadlineExceeded,
    RequestCancelled,
    RequestScope,
    Ticket,
    budget_s,
    client_timeout_s,
    run_in_scope,
    ticket,
    wait_for,
)
from serve.drain import DrainAccount, DrainWatch, drain, final_account


@pytest.mark.parametrize(("headers", "expected"), [
    ({"x-stainless-read-timeout": "30"}, 30.0),  # what openai 3.57 sends for timeout=30
    ({"x-stainless-read-timeout": "600"}, 600.0),  # its default timeout (Timeout(600, connect=5))
    ({"x-stainless-read-timeout": "2.5"}, 2.5),
    ({"x-request-timeout": "12"}, 12.0),
    ({"x-stainless-read-timeout": "soon"}, None),
    ({"x-stainless-read-timeout": "0"}, None),
    ({}, None),
])
def test_client_timeout_from_headers(headers: dict[str, str], expected: float | None) -> None:
    assert client_timeout_s(headers) == expected


def test_the_openai_client_sends_its_timeout_as_x_stainless_read_timeout() -> None:
    """What the installed `openai` package really sends (a local server records the headers)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from openai import APIStatusError, OpenAI

    seen: dict[str, str] = {}

    class Recorder(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            seen.update({k.lower(): v for k, v in self.headers.items()})
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        client = OpenAI(base_url=f"http://127.0.0.1:{httpd.server_address[1]}/v1", api_key="k", timeout=30,
                        max_retries=0)
        with pytest.raises(APIStatusError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    finally:
        httpd.shutdown()
    assert seen["x-stainless-read-timeout"] == "30" and client_timeout_s(seen) == 30.0


@pytest.mark.parametrize(("server", "client", "expected"), [
    (120.0, None, 120.0), (120.0, 30.0, 29.0), (10.0, 30.0, 10.0), (120.0, 1.0, 0.5), (None, None, None),
])
def test_budget(server: float | None, client: float | None, expected: float | None) -> None:
    assert budget_s(server, client, margin_s=1.0) == expected


class SlowResponse:
    """A `DeploymentResponse` stand-in that never resolves and records whether it was cancelled."""

    def __init__(self) -> None:
        self.cancelled = False

    def result(self, timeout_s: float | None = None) -> Any:
        time.sleep(timeout_s or 0)
        raise TimeoutError

    def cancel(self) -> None:
        self.cancelled = True


def test_a_call_past_the_deadline_is_cancelled_and_raises() -> None:
    scope, response = RequestScope.starting_now("r1", 0.3), SlowResponse()
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        run_in_scope(scope, lambda: wait_for(response))
    assert 0.25 < time.monotonic() - started < 1.0 and response.cancelled


def test_a_disconnect_cancels_the_blocked_call() -> None:
    scope, response = RequestScope.starting_now("r2", None), SlowResponse()
    threading.Timer(0.3, scope.cancelled.set).start()
    with pytest.raises(RequestCancelled):
        run_in_scope(scope, lambda: wait_for(response))
    assert response.cancelled


def test_the_ticket_carries_the_id_and_the_time_left() -> None:
    assert ticket() is None  # outside a request
    got = run_in_scope(RequestScope.starting_now("r3", 10.0), ticket)
    assert got is not None and got["request_id"] == "r3" and 9.0 < got["timeout_s"] <= 10.0
    t = Ticket.of(got)
    assert t.request_id == "r3" and not t.expired(time.monotonic()) and t.expired(time.monotonic() + 11)


@pytest.mark.slow  # imports Ray Serve
def test_the_generator_drops_expired_prompts_before_the_backend_sees_them() -> None:
    from serve.generator import DROPPED, Generator

    gen = Generator.func_or_class({"name": "fake", "params": {"mode": "fixed"}}, max_batch_size=4)
    sampling = SamplingParams(max_tokens=4)
    live, expired = Ticket("live", time.monotonic() + 60), Ticket("late", time.monotonic() - 1)
    prompts = [Prompt(text=f"prompt {i}", example_id=str(i)) for i in range(3)]
    out = asyncio.run(gen.run_batch([(prompts[0], sampling, live), (prompts[1], sampling, expired),
                                     (prompts[2], sampling, live)]))
    assert [g.error for g in out] == [None, DROPPED, None]
    assert gen.batch_stats() == [2] and gen.drop_stats() == {"deadline/queued": 1}
    assert live.started and not expired.started


@pytest.mark.slow  # imports Ray Serve
def test_a_cancelled_running_prompt_is_aborted_where_the_engine_can() -> None:
    """The seam for an engine with ``abort(request_id)`` (vLLM's async engine): called for cancelled
    prompts that were running, never for queued ones (Serve drops those)."""
    from serve.generator import Generator

    gen = Generator.func_or_class({"name": "fake", "params": {"mode": "fixed"}}, max_batch_size=4)
    aborted: list[str] = []
    gen.backend.abort = aborted.append  # type: ignore[attr-defined]
    gen._cancelled(Ticket("queued-one"), 2)
    running = Ticket("running-one", started=True)
    gen._cancelled(running, 1)
    assert aborted == [f"running-one#{running.call}"]  # the call's own key, not the client's bare id
    assert gen.drop_stats() == {"cancelled/queued": 2, "cancelled/running": 1}


def test_equal_client_request_ids_get_distinct_engine_keys() -> None:
    """Two calls with the same X-Request-ID (two clients, or one request's answer and probe) must not
    share an engine owner: an abort of one would cancel the other (issue 40)."""
    first, second = Ticket.of({"request_id": "same"}), Ticket.of({"request_id": "same"})
    assert first.request_id == second.request_id == "same"
    assert first.engine_key != second.engine_key
    assert first.engine_key.startswith("same#") and second.engine_key.startswith("same#")


def test_drain_totals_the_replicas_reports(tmp_path: Path) -> None:
    state = {"in_flight": 2, "drained": 0, "refused": 0}
    drained = threading.Event()
    DrainWatch(str(tmp_path), drained.set, lambda: dict(state))
    deadline = time.monotonic() + 10
    while not list(tmp_path.glob("replica-*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)  # the replica announces itself when it starts

    def finish() -> None:
        drained.wait(5)
        time.sleep(0.6)
        state.update(in_flight=0, drained=2, refused=3)

    threading.Thread(target=finish, daemon=True).start()
    started = time.monotonic()
    account = drain(tmp_path, budget_s=10)
    assert (account.drained, account.dropped, account.refused) == (2, 0, 3)
    assert drained.is_set() and time.monotonic() - started < 5


def test_drain_gives_up_after_its_budget_and_counts_the_rest_dropped(tmp_path: Path) -> None:
    (tmp_path / "replica-1.json").write_text(json.dumps({"in_flight": 4, "drained": 1, "refused": 0}))
    started = time.monotonic()
    account = drain(tmp_path, budget_s=0.8)
    assert (account.drained, account.dropped) == (1, 4) and 0.8 <= time.monotonic() - started < 5


def test_the_final_account_counts_what_finished_after_the_budget(tmp_path: Path) -> None:
    """A request still in flight when the budget ran out but answered while Ray stopped is finished: the
    account is read again from the replica's last report."""
    state = {"in_flight": 3, "drained": 1, "refused": 0}
    DrainWatch(str(tmp_path), lambda: None, lambda: dict(state))
    deadline = time.monotonic() + 10
    while not list(tmp_path.glob("replica-*.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert drain(tmp_path, budget_s=0.5) == DrainAccount(drained=1, dropped=3, refused=0)
    state.update(in_flight=1, drained=3)  # two more answered while Ray stopped; one still held at the end
    time.sleep(0.5)  # the watch reports every POLL_S
    assert final_account(tmp_path) == DrainAccount(drained=3, dropped=1, refused=0)


def test_drain_without_replicas_returns_at_once(tmp_path: Path) -> None:
    started = time.monotonic()
    assert drain(tmp_path, budget_s=10) == DrainAccount(0, 0, 0) and time.monotonic() - started < 1


def test_an_unexpected_failure_is_a_500_with_the_request_id_and_no_trace() -> None:
    """The middleware's last resort, on a real HTTP server (uvicorn), with a route that fails."""
    import uvicorn
    from fastapi import FastAPI

    from serve.http import install

    api = FastAPI()
    install(api)

    @api.get("/boom")
    async def boom() -> None:
        raise RuntimeError("secret /home/user/app.py detail")

    server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        while not server.started:
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        r = requests.get(f"http://127.0.0.1:{port}/boom", timeout=10)
    finally:
        server.should_exit = True
        thread.join(10)
    rid = r.headers["X-Request-ID"]
    assert r.status_code == 500 and re.fullmatch(r"[0-9a-f]{32}", rid)
    assert r.json()["error"] == {"message": f"internal error; quote request id {rid} to the operator",
                                 "type": "server_error", "param": None, "code": 500, "request_id": rid}
    assert "secret" not in r.text and ".py" not in r.text
