"""Requests-per-minute and tokens-per-minute limits of the openai backend (`RateLimiter`), on a fake clock."""

from __future__ import annotations

import asyncio

from biorab.generation.openai.rate_limit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(round(seconds, 6))
        self.now += seconds


def _starts(limiter: RateLimiter, clock: Clock, tokens: list[int]) -> list[float]:
    async def run() -> list[float]:
        out = []
        for t in tokens:
            await limiter.acquire(t)
            out.append(round(clock.now, 6))
        return out

    return asyncio.run(run())


def test_requests_per_minute() -> None:
    clock = Clock()
    limiter = RateLimiter(60, None, clock=clock, sleep=clock.sleep)  # a minute's 60 at once, then 1 a second
    starts = _starts(limiter, clock, [0] * 63)
    assert starts[:60] == [0.0] * 60 and starts[60:] == [1.0, 2.0, 3.0]


def test_tokens_per_minute_corrected_by_the_real_use() -> None:
    clock = Clock()
    limiter = RateLimiter(None, 1200, clock=clock, sleep=clock.sleep)  # 20 tokens a second
    assert _starts(limiter, clock, [1000]) == [0.0]
    limiter.record(200)  # used 200 of the 1,000 reserved: the bucket holds 1,000 again
    assert _starts(limiter, clock, [1000, 400]) == [0.0, 20.0]  # then empty: 400 tokens at 20/s
    assert clock.waits == [20.0]


def test_a_request_above_a_minutes_allowance_waits_for_a_full_bucket() -> None:
    clock = Clock()
    limiter = RateLimiter(None, 600, clock=clock, sleep=clock.sleep)
    assert _starts(limiter, clock, [600, 5000]) == [0.0, 60.0]


def test_no_limits_never_wait() -> None:
    clock = Clock()
    assert _starts(RateLimiter(None, None, clock=clock, sleep=clock.sleep), clock, [10**9] * 3) == [0.0] * 3
