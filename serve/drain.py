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
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from biorab.atomic_files import write_text_atomic

POLL_S = 0.1
DRAIN_FILE = "drain"


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
        while self._write(draining=True):
            time.sleep(POLL_S)

    def _write(self, *, draining: bool) -> bool:
        try:
            write_text_atomic(self.report, json.dumps({**self.stats(), "draining": draining}))
        except OSError:  # the command removed the folder: it has stopped reading
            return False
        return True


def drain(folder: Path, budget_s: float) -> DrainAccount:
    """Ask the replicas to drain and wait up to `budget_s` for their in-flight requests (no report at
    all: no replica of this command, nothing to wait for)."""
    write_text_atomic(folder / DRAIN_FILE, "")
    started = time.monotonic()
    while True:
        reports = _reports(folder)
        done = all(r.get("draining") and r.get("in_flight", 0) == 0 for r in reports)
        if done or time.monotonic() - started >= budget_s:
            break
        time.sleep(POLL_S)
    return _totals(reports)


def final_account(folder: Path) -> DrainAccount:
    """The totals of the replicas' last reports, read after they stopped (before `folder` is removed): a
    replica reports every `POLL_S` until it ends, so what it still held when Ray stopped it is `dropped`."""
    return _totals(_reports(folder))


def _totals(reports: list[dict[str, int]]) -> DrainAccount:
    return DrainAccount(drained=sum(r.get("drained", 0) for r in reports),
                        dropped=sum(r.get("in_flight", 0) for r in reports),
                        refused=sum(r.get("refused", 0) for r in reports))


def _reports(folder: Path) -> list[dict[str, int]]:
    out = []
    for path in sorted(folder.glob("replica-*.json")):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # replaced while read: the next poll sees it
            continue
    return out
