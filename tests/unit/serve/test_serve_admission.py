"""The bounded queue behind the ingress (`serve.admission`) and the 503 of each refusal path.

Issue 35: a burst of 8 at a generator with room for 12 (8 ongoing + 4 queued) got 503s, because Serve's
router counted calls still being routed as queued. The ingress now counts the calls it has in flight
itself, exactly, and Serve's bound is set to the same room.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from serve.admission import Admission, QueueFull
from serve.config import load_serve_config
from serve.deadlines import RequestScope
from serve.errors import (
    REFUSAL_HEADER,
    backpressure,
    client_gone,
    deadline_passed,
    queue_full,
    stopping,
    unavailable,
)


def _hold_together(admission: Admission, n: int) -> list[str]:
    """`n` threads ask for a slot at the same moment and hold it until all have asked."""
    asked, release = threading.Barrier(n), threading.Event()
    held = threading.Barrier(n + 1)  # the n threads, and this one: every slot is asked for and decided

    def one(_: int) -> str:
        asked.wait()
        try:
            with admission.slot():
                held.wait()
                release.wait(5)
                return "in"
        except QueueFull:
            held.wait()
            return "refused"

    with ThreadPoolExecutor(n) as pool:
        futures = [pool.submit(one, i) for i in range(n)]
        held.wait(10)
        release.set()
        return [f.result() for f in futures]


def test_a_burst_within_the_room_is_admitted_whole() -> None:
    admission = Admission("generator", 12)
    assert _hold_together(admission, 8) == ["in"] * 8
    assert (admission.in_flight, admission.refused) == (0, 0)


def test_calls_beyond_the_room_are_refused_at_once_naming_the_deployment() -> None:
    admission = Admission("generator", 4)
    outcomes = _hold_together(admission, 8)
    assert sorted(outcomes) == ["in"] * 4 + ["refused"] * 4
    assert admission.refused == 4 and admission.in_flight == 0
    with (admission.slot(), admission.slot(), admission.slot(), admission.slot(),
          pytest.raises(QueueFull, match=r"generator \(queue-full\): 4 calls in flight, limit 4"),
          admission.slot()):
        pass
    assert Admission("retriever", None).limit is None  # max_queued_requests: -1 is unbounded


def test_serve_gets_the_same_room_as_the_admission(monkeypatch: pytest.MonkeyPatch) -> None:
    from serve.app import compose

    cfg = load_serve_config(backend="fake", overrides={"auth": {"enabled": False}, "deployments": {
        "retriever": {"autoscaling": {"min_replicas": 1, "max_replicas": 3}, "max_ongoing_requests": 10,
                      "max_queued_requests": 5}}})
    generator = cfg.deployments.generator
    assert generator.admission_limit == 8 * 1 + 4  # smoke.yaml: one replica of 8 ongoing + 4 queued
    assert cfg.deployments.retriever.admission_limit == 3 * 10 + 5  # autoscaling: at max_replicas
    ingress = compose(cfg, None)._bound_deployment
    (ral,) = ingress.init_args[1].values()
    retriever, gen = ral["retriever"], ral["generator"]
    assert gen._bound_deployment._deployment_config.max_queued_requests == 12
    assert retriever._bound_deployment._deployment_config.max_queued_requests == 35
    assert ingress._deployment_config.max_queued_requests == 256  # the proxy's 429 bound is unchanged


def test_each_refusal_path_has_its_own_message_and_cause() -> None:
    scope = RequestScope.starting_now("r-1", 29.0)
    errors = {
        "queue-full": queue_full(2, "generator", 12, 12),
        "serve-backpressure": backpressure(2, "retriever", "num_queued_requests=4"),
        "unavailable": unavailable(2, "generator"),
        "deadline": deadline_passed(2, scope),
        "cancelled": client_gone(2),
        "stopping": stopping(2),
    }
    for cause, error in errors.items():
        assert error.status == 503 and error.headers[REFUSAL_HEADER] == cause
        assert error.headers["Retry-After"] == "2"
    assert len({e.message for e in errors.values()}) == len(errors)
    assert errors["queue-full"].message == ("the generator queue is full (12 calls in flight, limit 12); "
                                            "retry later")
    assert "deadline of 29.0 s (request r-1)" in errors["deadline"].message
    assert "at capacity" not in errors["deadline"].message
    assert "failed to deploy" in errors["unavailable"].message
