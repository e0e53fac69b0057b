"""Exact admission of calls from an ingress replica to a deployment behind it (the bounded queue).

Why not Serve's own ``max_queued_requests``: Serve's router counts a call as queued from the moment it
enters the router until a replica is chosen, which takes an await or a queue-length probe even when
replicas are idle. Calls that arrive together (a burst of 8 requests whose retrievals end together) are
then all "queued" at once, and the 5th sees a queue of 4 and is refused with 503 although the generator
had 8 free slots (Ray documents the over-rejection in ``Router.wrap_request_assignment``). That was the
unexplained 503 of tests/vllm's burst of 8 (issue 35; reproduced on the fake backend: 1 burst in 10).

`Admission` counts the calls in flight from this replica (sent and not yet answered) under a lock, and
refuses a call only when they already fill the deployment: ``replicas × max_ongoing_requests +
max_queued_requests`` (`serve.config.DeploymentOptions.admission_limit`). Serve's ``max_queued_requests``
for the deployment is set to that same limit, so its racy count never refuses first.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Refused(Exception):
    """A call to `deployment` that was not made or not accepted; `cause` names the path
    (``queue-full``: `Admission`; ``serve-backpressure``: Serve's router; ``unavailable``: the deployment
    failed to deploy)."""

    def __init__(self, deployment: str, cause: str, detail: str) -> None:
        super().__init__(f"{deployment} ({cause}): {detail}")
        self.deployment, self.cause, self.detail = deployment, cause, detail


class QueueFull(Refused):
    """A call refused because the deployment already holds `limit` calls of this ingress replica."""

    def __init__(self, deployment: str, in_flight: int, limit: int) -> None:
        super().__init__(deployment, "queue-full", f"{in_flight} calls in flight, limit {limit}")
        self.in_flight, self.limit = in_flight, limit


class Admission:
    """The calls in flight to one deployment from this process, bounded by `limit` (``None``: unbounded)."""

    def __init__(self, deployment: str, limit: int | None) -> None:
        self.deployment, self.limit = deployment, limit
        self.in_flight = 0
        self.refused = 0
        self._lock = threading.Lock()

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one slot while the block runs; `QueueFull` at once when none is free."""
        with self._lock:
            if self.limit is not None and self.in_flight >= self.limit:
                self.refused += 1
                raise QueueFull(self.deployment, self.in_flight, self.limit)
            self.in_flight += 1
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1
