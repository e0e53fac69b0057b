"""The openai backend against a real local HTTP server: `timeout_s` bounds each attempt's wall-clock time
even when the server trickles its answer, `Retry-After` is honoured up to `retry_after_max_s`, and no
more than `concurrency` requests are ever in flight."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from biorab.common.records import Prompt
from biorab.generation import SamplingParams, build_backend
from tests.support.fault_openai_server import FaultServer


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as s:
        yield s


def _prompts(n: int) -> list[Prompt]:
    return [Prompt(f"ade/test/{i}", f"prompt {i}", stop=("\n",)) for i in range(n)]


def _backend(server: FaultServer, **params: object):  # type: ignore[no-untyped-def]
    base = {"base_url": server.base_url, "model": "fault-model", "backoff_s": 0.01, "backoff_max_s": 0.05}
    return build_backend("openai", {**base, **params})


@pytest.mark.timeout(120)
def test_trickling_server_is_cut_at_timeout_s(server: FaultServer) -> None:
    # each answer is ~250 bytes at 0.1 s a byte: ~25 s per attempt if only each read were bounded
    server.faults = {f"prompt {i}": ["trickle", "trickle"] for i in range(8)}
    backend = _backend(server, timeout_s=1.0, max_retries=1, concurrency=4)
    start = time.monotonic()
    gens = backend.generate(_prompts(8), SamplingParams(max_tokens=8))
    elapsed = time.monotonic() - start
    backend.close()
    assert [g.error for g in gens] == ["failed after 2 attempt(s): timeout after 1.0 s"] * 8
    # 8 prompts × 2 attempts of 1 s over 4 connections = 4 s, plus backoff and slack for a loaded machine
    # (unbounded, each attempt would take ~25 s)
    assert 3.9 <= elapsed < 12.0, elapsed


def test_trickle_then_success_keeps_the_row(server: FaultServer) -> None:
    server.faults = {"prompt 0": ["trickle"]}
    backend = _backend(server, timeout_s=0.5, max_retries=1)
    (gen,) = backend.generate(_prompts(1), SamplingParams(max_tokens=8))
    backend.close()
    assert (gen.text, gen.error, server.attempts("prompt 0")) == ("re: prompt 0", None, 2)


@pytest.mark.parametrize(("ceiling", "low", "high"), [(None, 1.0, 2.5), (0.3, 0.3, 0.95)])
def test_retry_after_is_honoured_up_to_its_ceiling(
    server: FaultServer, ceiling: float | None, low: float, high: float
) -> None:
    """Retry-After: 1 with backoff_max_s 0.05: the wait is the server's 1 s (default ceiling 120 s), or
    the configured ceiling when it is lower."""
    server.faults, server.retry_after = {"prompt 0": ["429"]}, "1"
    extra = {} if ceiling is None else {"retry_after_max_s": ceiling}
    backend = _backend(server, timeout_s=5, max_retries=2, **extra)
    (gen,) = backend.generate(_prompts(1), SamplingParams(max_tokens=8))
    backend.close()
    first, second = (r.at for r in server.log)
    assert gen.error is None and low <= second - first < high, second - first


def test_exponential_backoff_timing(server: FaultServer) -> None:
    """Without Retry-After the waits follow full jitter under min(backoff_max_s, backoff_s * 2**n)."""
    server.faults = {"prompt 0": ["503", "503", "503"]}
    backend = _backend(server, timeout_s=5, max_retries=3, backoff_s=0.2, backoff_max_s=0.3)
    (gen,) = backend.generate(_prompts(1), SamplingParams(max_tokens=8))
    backend.close()
    times = [r.at for r in server.log]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert gen.error is None and len(gaps) == 3
    for gap, cap in zip(gaps, (0.2, 0.3, 0.3), strict=True):
        assert 0 <= gap < cap + 0.4, gaps  # slack for a loaded machine


def test_concurrency_limit_is_never_exceeded(server: FaultServer) -> None:
    server.delay_s = 0.2
    backend = _backend(server, timeout_s=5, concurrency=3)
    start = time.monotonic()
    gens = backend.generate(_prompts(12), SamplingParams(max_tokens=8))
    elapsed = time.monotonic() - start
    backend.close()
    assert all(g.error is None for g in gens)
    assert server.max_in_flight == 3
    assert 0.8 <= elapsed < 4.0, elapsed  # 12 requests / 3 at a time × 0.2 s (+ slack)
