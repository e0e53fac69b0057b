"""The app's own Prometheus metrics (next to Ray Serve's ``ray_serve_*``), exported by Ray's metrics agent.

The awareness "reject" rate is ``biorab_awareness_judgements_total{judgement="False"}`` over the sum
of all judgements (a PromQL ratio; see docs/serve.md).
"""

from __future__ import annotations

import contextlib

from ray.serve.metrics import Counter, Histogram

from biorab.ral import Answer
from serve.clients import Timings

_MS = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 1e4, 3e4, 6e4]


class AppMetrics:
    """Created once per ingress replica."""

    def __init__(self) -> None:
        self.requests = Counter("biorab_requests_total", description="requests by route and status",
                                tag_keys=("route", "status"))  # type: ignore[arg-type]
        self.retrieval_ms = Histogram("biorab_retrieval_latency_ms", description="time in the retriever",
                                      boundaries=_MS)
        self.generation_ms = Histogram("biorab_generation_latency_ms",
                                       description="time in the generator (task answer and probe)",
                                       boundaries=_MS)
        self.tokens = Counter("biorab_tokens_total", description="prompt and completion tokens",
                              tag_keys=("kind",))
        self.parse_failures = Counter("biorab_parse_failures_total",
                                      description="answers the parser could not read")
        self.refusals = Counter("biorab_refusals_total",
                                description="503s by cause (queue-full, serve-backpressure, unavailable, "
                                            "deadline, cancelled) and the deployment that refused "
                                            "(`target`: Serve reserves the tag `deployment`)",
                                tag_keys=("cause", "target"))  # type: ignore[arg-type]
        self.judgements = Counter("biorab_awareness_judgements_total",
                                  description="awareness probe judgements (False: the model rejects the "
                                              "retrieved example as negative; none: unparsable)",
                                  tag_keys=("judgement",))

    def observe(self, answer: Answer, timings: Timings) -> None:
        if timings.calls.get("retrieval"):
            self.retrieval_ms.observe(timings.retrieval_s * 1000)
        self.generation_ms.observe(timings.generation_s * 1000)
        gen = answer.generation
        for kind, count in (("prompt", gen.prompt_tokens), ("completion", gen.completion_tokens)):
            if count > 0:  # Ray's Counter refuses increments of 0
                self.tokens.inc(count, tags={"kind": kind})
        if not answer.prediction.ok:
            self.parse_failures.inc()
        if answer.probe is not None:
            self.judgements.inc(tags={"judgement": answer.probe.judgement or "none"})

    def refused(self, cause: str, deployment: str) -> None:
        self.refusals.inc(tags={"cause": cause, "target": deployment or "none"})

    def request(self, route: str, status: int) -> None:
        self.requests.inc(tags={"route": route, "status": str(status)})


class DropMetrics:
    """Work the generator did not do because nobody waited for it any more (one per generator replica).

    ``reason``: ``cancelled`` (the caller cancelled: deadline at the ingress, client disconnect, server
    stopping) or ``deadline`` (it expired in the queue); ``stage``: ``queued`` (never computed) or
    ``running`` (the backend was already generating it; aborted where the engine can, else finished and
    thrown away)."""

    def __init__(self) -> None:
        from ray.serve.exceptions import RayServeException

        self.counter: Counter | None = None
        with contextlib.suppress(RayServeException):  # outside a replica (a test's generator): counts only
            self.counter = Counter("biorab_dropped_total", description="prompts dropped by the generator",
                                   tag_keys=("reason", "stage"))  # type: ignore[arg-type]

    def dropped(self, reason: str, stage: str, n: int) -> None:
        if n > 0 and self.counter is not None:  # Ray's Counter refuses increments of 0
            self.counter.inc(n, tags={"reason": reason, "stage": stage})
