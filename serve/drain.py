"""Graceful stop of `biorab serve`: a control folder shared by the command and its local ingress replicas.

Each ingress replica's `DrainWatch` thread writes ``replica-<pid>.json`` when it starts (so the command
knows the replica exists). The command writes ``drain`` into the folder; each watch sees it within
`POLL_S`, stops admitting requests (503 with ``Retry-After``) and writes its counts (in flight, finished
since, refused since, ``draining: true``) until it stops. `drain` waits until every replica has reported
draining with no request in flight, or the budget is spent, and returns the totals; `final_account`
reads them again once the command has stopped Ray, from each replica's last report (a request still in
flight at the budget may finish while Ray stops, and its client then gets its answer). A file, not a
deployment call: under load a call to the ingress would queue behind the very requests it is meant to
drain. Local Ray only (a remote cluster's replicas cannot see the folder; `biorab serve` then relies on
Serve's own graceful stop).

A replica's count of a request ends when its handler returns the response; Serve's HTTP proxy still has
to receive that response from the replica and write it to the client. Stopping Ray in that window kills
the replica under the proxy's feet, and the proxy answers the client 500 (a `RayActorError` becomes 500
in `ray.serve._private.http_util`) for a request the account counts as finished. So `drain` waits until
every replica has been quiet (draining, nothing in flight) for `SETTLE_S`, as each replica reports it
(``quiet_s``), not merely until one poll sees nothing in flight.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from biorab.common.atomic_files import write_text_atomic

POLL_S = 0.1
DRAIN_FILE = "drain"
#: How long every replica must have held no request before Ray is stopped: time for the proxy to hand the
#: last responses to their clients (see the module docstring). Small against the drain budget (30 s).
SETTLE_S = 1.0


@dataclass(frozen=True)
class DrainAccount:
    """What happened to the requests in flight when the stop began."""

    drained: int
    dropped: int
    refused: int


class DrainWatch:
    """A daemon thread in an ingress replica: calls `on_drain` once the drain file exists, then reports
    `stats()` into the folder every `POLL_S`."""

    def __init__(self, folder: str, on_drain: Callable[[], None],
                 stats: Callable[[], dict[str, int]]) -> None:
        self.folder = Path(folder)
        self.on_drain, self.stats = on_drain, stats
        self.report = self.folder / f"replica-{os.getpid()}.json"
        threading.Thread(target=self._run, name="biorab-drain-watch", daemon=True).start()

    def _run(self) -> None:
        if not self._write(draining=False):
            return
        while not (self.folder / DRAIN_FILE).exists():
            time.sleep(POLL_S)
        self.on_drain()
        quiet_since: float | None = None
        last_drained: int | None = None
        while True:
            stats = self.stats()
            now = time.monotonic()
            # quiet: nothing in flight since `quiet_since` (a request that came and went between two polls
            # moved `drained`, so a change there restarts the clock too)
            busy = stats.get("in_flight", 0) > 0 or stats.get("drained") != last_drained
            last_drained = stats.get("drained")
            quiet_since = None if busy else (quiet_since if quiet_since is not None else now)
            quiet = 0.0 if quiet_since is None else now - quiet_since
            if not self._write(draining=True, stats=stats, quiet_s=round(quiet, 3)):
                return
            time.sleep(POLL_S)

    def _write(self, *, draining: bool, stats: dict[str, int] | None = None, quiet_s: float = 0.0) -> bool:
        report = {**(stats if stats is not None else self.stats()), "draining": draining, "quiet_s": quiet_s}
        try:
            write_text_atomic(self.report, json.dumps(report))
        except OSError:  # the command removed the folder: it has stopped reading
            return False
        return True


def drain(folder: Path, budget_s: float, settle_s: float = SETTLE_S) -> DrainAccount:
    """Ask the replicas to drain and wait up to `budget_s` until each has held no request for `settle_s`
    (no report at all: no replica of this command, nothing to wait for)."""
    write_text_atomic(folder / DRAIN_FILE, "")
    started = time.monotonic()
    while True:
        reports = _reports(folder)
        done = all(r.get("draining") and r.get("in_flight", 0) == 0 and r.get("quiet_s", 0.0) >= settle_s
                   for r in reports)
        if done or time.monotonic() - started >= budget_s:
            break
        time.sleep(POLL_S)
    return _totals(reports)


def final_account(folder: Path) -> DrainAccount:
    """The totals of the replicas' last reports, read after they stopped (before `folder` is removed): a
    replica reports every `POLL_S` until it ends, so what it still held when Ray stopped it is `dropped`."""
    return _totals(_reports(folder))


def _totals(reports: list[dict[str, float]]) -> DrainAccount:
    return DrainAccount(drained=int(sum(r.get("drained", 0) for r in reports)),
                        dropped=int(sum(r.get("in_flight", 0) for r in reports)),
                        refused=int(sum(r.get("refused", 0) for r in reports)))


def _reports(folder: Path) -> list[dict[str, float]]:
    out = []
    for path in sorted(folder.glob("replica-*.json")):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # replaced while read: the next poll sees it
            continue
    return out
