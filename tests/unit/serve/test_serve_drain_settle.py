"""`drain` does not end the moment a replica's last request leaves its handler: Serve's proxy still has to
hand that response to its client, and stopping Ray then turns it into a 500 from the proxy. It waits until
every replica has held no request for `SETTLE_S` (each replica's ``quiet_s``)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from serve.drain import POLL_S, SETTLE_S, DrainWatch, drain


def test_drain_waits_for_the_replica_to_settle_after_its_last_request(tmp_path: Path) -> None:
    state = {"in_flight": 1, "drained": 0, "refused": 0}
    on_drain = threading.Event()
    DrainWatch(str(tmp_path), on_drain.set, lambda: dict(state))
    finished: list[float] = []

    def last_request() -> None:
        on_drain.wait(5)
        time.sleep(0.3)
        state.update(in_flight=0, drained=1)  # the handler returned; the proxy may still be sending
        finished.append(time.monotonic())

    threading.Thread(target=last_request, daemon=True).start()
    time.sleep(0.3)  # the replica's first report
    account = drain(tmp_path, budget_s=10)
    ended = time.monotonic()
    assert (account.drained, account.dropped) == (1, 0)
    # at least SETTLE_S after the handler returned (one poll of slack either way), well within the budget
    assert SETTLE_S - POLL_S <= ended - finished[0] < SETTLE_S + 2.0


def test_a_request_between_two_polls_restarts_the_settling(tmp_path: Path) -> None:
    state = {"in_flight": 0, "drained": 0, "refused": 0}
    on_drain = threading.Event()
    DrainWatch(str(tmp_path), on_drain.set, lambda: dict(state))
    moved: list[float] = []

    def brief_request() -> None:
        on_drain.wait(5)
        time.sleep(0.6)
        state.update(drained=1)  # came and went between polls: never seen in flight
        moved.append(time.monotonic())

    threading.Thread(target=brief_request, daemon=True).start()
    time.sleep(0.3)
    drain(tmp_path, budget_s=10)
    assert time.monotonic() - moved[0] >= SETTLE_S - POLL_S


def test_an_idle_server_stops_after_one_settling(tmp_path: Path) -> None:
    DrainWatch(str(tmp_path), lambda: None, lambda: {"in_flight": 0, "drained": 0, "refused": 0})
    time.sleep(0.3)
    started = time.monotonic()
    drain(tmp_path, budget_s=10)
    assert SETTLE_S - POLL_S <= time.monotonic() - started < SETTLE_S + 2.0
