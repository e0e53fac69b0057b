"""The Serve app under load (local Ray, Serve's proxy, the fake backend): bounded queues answer 503 with
Retry-After at once, deadlines (the server's and the client's own timeout header) end in 503 or 408, and
work whose client is gone is dropped before it is batched and counted.

One Serve instance for the module with two apps: ``fast`` (0.3 s per generator call, a generator that holds
2 calls + 2 queued) and ``slow`` (3 s per call, one at a time), and an 8 s proxy timeout for both.
"""

from __future__ import annotations

import re
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from tests.ray.test_serve_app import staged_data

pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(600)]
KEY = "load-key"
RETRIEVAL = {"testbed": "labeled", "retriever": "bm25", "k": 1, "template": "bm25"}
REQUEST_TIMEOUT_S = 8.0
SMALL = {"num_cpus": 0.1}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(name: str, delay_s: float, generator: dict[str, Any], tmp: str) -> Any:
    from serve.config import load_serve_config

    return load_serve_config(overrides={
        "name": name, "data_dir": str(staged_data()), "retrieval": RETRIEVAL,
        "backend": {"name": "fake", "params": {"mode": "choice", "delay_s": delay_s}},
        "cache": {"dir": tmp}, "auth": {"enabled": False},
        "http": {"request_timeout_s": REQUEST_TIMEOUT_S, "deadline_margin_s": 1.0},
        "deployments": {"ingress": {**SMALL, "max_ongoing_requests": 16, "max_queued_requests": 16,
                                    "retry_after_s": 2},
                        "retriever": SMALL,
                        "generator": {**SMALL, "batch_wait_timeout_s": 0.01, **generator}},
    })


@pytest.fixture(scope="module")
def apps() -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve.app import compose

    temp = tempfile.mkdtemp(prefix="rl-", dir="/tmp")  # short: Ray's unix socket paths are limited
    port, metrics_port = _free_port(), _free_port()
    fast = _config("fast", 0.3, {"max_batch_size": 2, "max_ongoing_requests": 2, "max_queued_requests": 2},
                   temp)
    slow = _config("slow", 3.0, {"max_batch_size": 1, "max_ongoing_requests": 4, "max_queued_requests": 8},
                   temp)
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=200_000_000,
             _temp_dir=temp, _metrics_export_port=metrics_port, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port, "request_timeout_s": REQUEST_TIMEOUT_S})
        serve.run(compose(fast, None), name="fast", route_prefix="/fast")
        serve.run(compose(slow, None), name="slow", route_prefix="/slow")
        url = f"http://127.0.0.1:{port}"
        for app in ("fast", "slow"):  # warm: the model info the ingress asks once, the first BM25 search
            assert requests.get(f"{url}/{app}/v1/models", timeout=60).status_code == 200
            assert requests.post(f"{url}/{app}/v1/retrieve", json={"input": "warm"}, timeout=60).ok
        yield {"url": f"http://127.0.0.1:{port}", "metrics": f"http://127.0.0.1:{metrics_port}"}
    finally:
        serve.shutdown()
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def ral(apps: dict[str, Any], app: str, text: str, timeout: float = 60) -> requests.Response:
    return requests.post(f"{apps['url']}/{app}/v1/ral", json={"input": text}, timeout=timeout)


def drops(app: str) -> dict[str, int]:
    from ray import serve

    return dict(serve.get_deployment_handle("generator", app).drop_stats.remote().result())


def test_a_full_generator_queue_gets_503_with_retry_after_at_once(apps: dict[str, Any]) -> None:
    started = time.monotonic()
    with ThreadPoolExecutor(12) as pool:
        responses = list(pool.map(lambda i: ral(apps, "fast", f"queue probe {i}"), range(12)))
    elapsed = time.monotonic() - started
    codes = sorted(r.status_code for r in responses)
    assert set(codes) == {200, 503}, codes
    assert codes.count(200) >= 4, codes  # the generator's whole room: 2 running + 2 queued
    rejected = [r for r in responses if r.status_code == 503]
    assert all(r.headers.get("Retry-After") == "2" for r in rejected), \
        [r.text[:120] for r in rejected if r.headers.get("Retry-After") != "2"]
    assert all(r.json()["error"]["type"] == "overloaded_error" for r in rejected)
    assert all(r.headers.get("X-BioRAB-Refusal") == "queue-full" for r in rejected), \
        [r.text for r in rejected]
    assert all(r.json()["error"]["message"] == "the generator queue is full (4 calls in flight, limit 4); "
               "retry later" for r in rejected)
    assert elapsed < REQUEST_TIMEOUT_S  # refused at once, not after a timeout


def test_bursts_that_fit_the_generators_room_are_all_answered(apps: dict[str, Any]) -> None:
    """Issue 35: bursts as large as the generator's room (2 ongoing + 2 queued), whose calls reach the
    generator together, got 503 from Serve's router (it counted calls still being routed as queued). The
    ingress's exact admission answers every one."""
    for burst in range(10):
        texts = [f"burst {burst} request {i}" for i in range(4)]
        with ThreadPoolExecutor(4) as pool:
            responses = list(pool.map(lambda text: ral(apps, "fast", text), texts))
        assert [r.status_code for r in responses] == [200] * 4, (burst, [r.text[:200] for r in responses])


def test_the_openai_clients_timeout_header_ends_a_queued_request_in_503_and_drops_its_work(
        apps: dict[str, Any]) -> None:
    """The official client sends its timeout (X-Stainless-Read-Timeout); a request queued behind a 3 s
    generation with a 2.5 s client timeout gets 503 after 1.5 s (2.5 less the 1 s margin), and its prompt
    is never generated."""
    from openai import APIStatusError, OpenAI

    before = drops("slow").get("cancelled/queued", 0)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(ral, apps, "slow", "occupies the generator")
        time.sleep(1.0)  # in the generator
        client = OpenAI(base_url=f"{apps['url']}/slow/v1", api_key="unused", max_retries=0, timeout=2.5)
        started = time.monotonic()
        with pytest.raises(APIStatusError) as err:
            client.chat.completions.create(model="slow", messages=[{"role": "user", "content": "queued"}])
        waited = time.monotonic() - started
        assert first.result().status_code == 200
    assert err.value.status_code == 503 and err.value.response.headers["Retry-After"] == "2"
    assert err.value.response.headers["X-BioRAB-Refusal"] == "deadline"
    assert "deadline of 1.5 s" in err.value.message
    assert 1.4 < waited < 2.5  # the deadline, not earlier, and before the client's own timeout
    assert drops("slow").get("cancelled/queued", 0) == before + 1


def test_a_request_past_request_timeout_s_gets_408_and_its_queued_work_is_dropped(
        apps: dict[str, Any]) -> None:
    before = drops("slow").get("cancelled/queued", 0)
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(ral, apps, "slow", f"timeout probe {i}") for i in range(4)]
        codes = sorted(f.result().status_code for f in futures)
    # Generations of 3 s one after another: two fit in the 8 s, the third would end at 9 s (running at 8 s)
    # and the fourth at 12 s (still queued at 8 s). A loaded machine may turn a 200 into a 408.
    assert codes.count(408) >= 2 and set(codes) <= {200, 408}, codes
    time.sleep(3.5)  # the third one's generation had started: it finishes, unanswered
    dropped = drops("slow")
    assert dropped.get("cancelled/queued", 0) >= before + 1, dropped
    assert dropped.get("cancelled/running", 0) >= 1, dropped


def test_a_client_that_disconnects_has_its_queued_work_dropped(apps: dict[str, Any]) -> None:
    time.sleep(3.5)  # nothing of the previous test left in the slow generator
    before = drops("slow").get("cancelled/queued", 0)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(ral, apps, "slow", "occupies the generator")
        time.sleep(1.0)  # in the generator
        with pytest.raises(requests.exceptions.ReadTimeout):  # no timeout header: the server cannot know
            ral(apps, "slow", "gives up after one second", timeout=1.0)
        assert first.result().status_code == 200
    deadline = time.monotonic() + 10
    while drops("slow").get("cancelled/queued", 0) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert drops("slow").get("cancelled/queued", 0) == before + 1


def test_dropped_work_and_refusals_are_counted_in_metrics(apps: dict[str, Any]) -> None:
    dropped = re.compile(r'ray_biorab_dropped_total\{[^}]*reason="cancelled"[^}]*stage="queued"[^}]*\} (\d+)')
    refused = re.compile(r'ray_biorab_refusals_total\{[^}]*cause="queue-full"[^}]*target="generator"'
                         r'[^}]*\} (\d+)')
    deadline, found, full = time.monotonic() + 90, None, None
    while time.monotonic() < deadline:
        text = requests.get(apps["metrics"] + "/metrics", timeout=10).text
        found, full = dropped.search(text), refused.search(text)
        if found and full:
            break
        time.sleep(3)
    assert found is not None and int(float(found.group(1))) >= 1
    assert full is not None and int(float(full.group(1))) >= 1  # the first test's refusals
