"""Client-side requests-per-minute and tokens-per-minute limits for one model (an API's published limits,
kept so a long sweep is not answered with a stream of 429s): a token bucket per limit, refilled
continuously, each holding at most one minute's allowance.

Tokens are not known before the answer: a request reserves an estimate (`RateLimiter.acquire`), and the
bucket is corrected by the real count afterwards (`RateLimiter.record`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class _Bucket:
    def __init__(self, per_minute: float, clock: Callable[[], float]) -> None:
        self.rate = per_minute / 60.0
        self.capacity = per_minute
        self.level = per_minute
        self._clock = clock
        self._at = clock()

    def refill(self) -> None:
        now = self._clock()
        self.level = min(self.capacity, self.level + (now - self._at) * self.rate)
        self._at = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` is available (0 when it is); a request above a minute's allowance waits
        for a full bucket rather than forever."""
        self.refill()
        need = min(amount, self.capacity) - self.level
        return max(0.0, need / self.rate)


class RateLimiter:
    """Limits for one model; None disables a limit. Use from one event loop."""

    def __init__(self, requests_per_minute: float | None, tokens_per_minute: float | None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._sleep = sleep
        self._requests = _Bucket(requests_per_minute, clock) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute, clock) if tokens_per_minute else None
        self._lock: asyncio.Lock | None = None
        self._reserved: list[float] = []

    async def acquire(self, tokens: int) -> None:
        """Wait until one more request of about `tokens` tokens fits in both limits, then take it."""
        if self._requests is None and self._tokens is None:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # first come, first served: a big request is not starved by small ones
            while True:
                wait = max(self._requests.wait_for(1) if self._requests else 0.0,
                           self._tokens.wait_for(tokens) if self._tokens else 0.0)
                if wait <= 0:
                    break
                await self._sleep(wait)
            if self._requests:
                self._requests.level -= 1
            if self._tokens:
                self._tokens.level -= min(tokens, self._tokens.capacity)
                self._reserved.append(min(tokens, self._tokens.capacity))

    def record(self, tokens: int) -> None:
        """Correct the token bucket by the real use of a finished request (reserved with `acquire`)."""
        if self._tokens is None or not self._reserved:
            return
        self._tokens.refill()
        self._tokens.level += self._reserved.pop(0) - tokens
