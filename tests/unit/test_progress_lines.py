"""Plain progress lines: every `every_s` seconds or `every_n` units, a heartbeat while nothing arrives,
and a final line; the format `progress: done/total unit (pct%), rate unit/s, eta Ns`."""

from __future__ import annotations

from biorab.common.progress_lines import ProgressLines


def make(times: list[float], **kwargs: object) -> tuple[ProgressLines, list[str]]:
    out: list[str] = []
    clock = iter(times).__next__
    return ProgressLines("rows", write=out.append, clock=clock, **kwargs), out  # type: ignore[arg-type]


def test_lines_every_10s_heartbeat_and_final() -> None:
    p, out = make([0.0, 0.0, 4.0, 10.0, 21.0, 23.0, 24.0])
    p(0, 96)  # t=0: the total is announced, no line yet
    p.tick()  # t=4: not due
    p.tick()  # t=10: due: the run is alive although no row arrived
    p(40, 96)  # t=21: due
    p(50, 96)  # t=23: not due
    p.finish()  # t=24: final count
    assert out == ["progress: 0/96 rows (0%), 0.0 rows/s",
                   "progress: 40/96 rows (42%), 1.9 rows/s, eta 29s",
                   "progress: 90/96 rows (94%), 3.8 rows/s, eta 2s"]


def test_every_n_rows_and_done_line_not_repeated() -> None:
    p, out = make([0.0, 1.0, 2.0, 3.0, 4.0], every_n=5)
    p(3, 8)
    p(3, 8)  # 6 rows since the last line: due
    p(2, 8)  # all done: due
    p.finish()  # already shown
    assert out == ["progress: 6/8 rows (75%), 3.0 rows/s, eta 1s",
                   "progress: 8/8 rows (100%), 2.7 rows/s, eta 0s"]


def test_heartbeat_before_any_total_and_no_final_line_for_nothing() -> None:
    p, out = make([0.0, 12.0, 13.0])
    p.tick()  # t=12: alive, nothing known yet
    p.finish()  # nothing was counted: no final line
    assert out == ["progress: 0 rows after 12s"]


def test_no_rate_within_a_second_of_the_start() -> None:
    # 4 rows counted 2 µs after the start (a cell served from the cache) have no rate: the old line was
    # "4/4 rows (100%), 2000000.0 rows/s, eta 0s"; a line one second later still says they came at once
    p, out = make([0.0, 2e-6, 1.0])
    p(4, 4)
    assert out == ["progress: 4/4 rows (100%) at once"]
    assert p.line(1.0) == "progress: 4/4 rows (100%) at once; finishing for 1s"
    q, _ = make([0.0, 1e-6, 2.0])  # rows still arriving a second after the start have a rate
    q(1, 4)
    assert q.line(2.0) == "progress: 1/4 rows (25%), 0.5 rows/s, eta 6s"


def test_rate_frozen_once_every_row_is_counted() -> None:
    # 96 rows in 24 s = 4.0 rows/s; heartbeats 10 s and 30 s later (the run scoring) keep that rate and say
    # how long the finishing has taken, instead of 96/34 = 2.8 and 96/54 = 1.8 rows/s
    p, out = make([0.0, 0.0, 24.0, 34.0, 54.0, 55.0])
    p(0, 96)
    p(96, 96)  # t=24: all counted: due
    p.tick()  # t=34
    p.tick()  # t=54
    p.finish()  # t=55: the final count was shown already
    assert out == ["progress: 96/96 rows (100%), 4.0 rows/s, eta 0s",
                   "progress: 96/96 rows (100%), 4.0 rows/s, eta 0s; finishing for 10s",
                   "progress: 96/96 rows (100%), 4.0 rows/s, eta 0s; finishing for 30s"]
