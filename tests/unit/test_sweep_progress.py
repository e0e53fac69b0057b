"""`biorab sweep`'s plain progress lines: a heartbeat while nothing is written (a model loading), per-model
and per-cell lines with rows, rate and ETA, and a last line per cell and model."""

from __future__ import annotations

import time
from types import SimpleNamespace

from biorab.cli.support.sweep_progress import SweepLines


def _slice(cell_id: str, label: str, pending: int) -> SimpleNamespace:
    return SimpleNamespace(plan=SimpleNamespace(cell_id=cell_id, label=label), pending=[{}] * pending)


def test_heartbeat_then_model_and_cell_lines() -> None:
    lines: list[str] = []
    with SweepLines(lines.append, every_s=0.3) as shown:
        shown.start_model("m", 2)
        time.sleep(1.6)  # nothing written yet: the heartbeat still says the sweep is alive
        beats = [line for line in lines if line.startswith("model m: 0 rows after")]
        assert len(beats) >= 2, lines
        cell_rows = shown.cells([_slice("c1", "ds__none", 2), _slice("c2", "ds__bm25", 2)])
        cell_rows({"c1": 0})  # the cell starts
        cell_rows({"c1": 2})
        shown.rows(2, 4)
        cell_rows({"c2": 2})
        shown.rows(2, 4)
        shown.end_model()
    # each cell's rows came within a second of its start: no rate (a cache-served cell printed
    # "17,889,087.7 rows/s", rows over microseconds)
    assert "  cell ds__none: 2/2 rows (100%) at once" in lines, lines
    assert "  cell ds__bm25: 2/2 rows (100%) at once" in lines, lines
    assert lines[-1].startswith("model m: 4/4 rows (100%), ") and lines[-1].endswith("eta 0s"), lines


def test_bars_show_model_and_cells_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from biorab.cli.support.sweep_progress import SweepBars

    screen = io.StringIO()
    with SweepBars(Console(file=screen, force_terminal=True, width=160)) as shown:
        shown.start_model("m", 1)
        cell_rows = shown.cells([_slice("c1", "ds__none", 2)])
        cell_rows({"c1": 0})
        cell_rows({"c1": 2})
        shown.rows(2, 2)
        shown.end_model()
    text = screen.getvalue()
    assert "model m" in text and "ds__none" in text and "2/2" in text
