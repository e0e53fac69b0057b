"""`AttributionRows` holds one cell's full rows at a time and only a twin's few fields after (issue 45: the
driver's memory set by the largest cell, not by a run's rows)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from biorab.attribution import cell_attribution
from biorab.attribution.cell_attribution import TWIN_FIELDS, AttributionRows


def test_one_cell_at_a_time_and_twins_slim(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []

    def fake_rows(result: Any, memo: Any) -> list[dict[str, Any]]:
        reads.append(result.predictions_path.name)
        return [{"id": f"{result.predictions_path.stem}/{i}", "_pred": i, "_right": i % 2 == 0,
                 "hit_tags": "x" * 100} for i in range(3)]

    monkeypatch.setattr(cell_attribution, "_cell_rows", fake_rows)
    a, b, t = (cast(Any, SimpleNamespace(predictions_path=Path(f"{n}.parquet"))) for n in ("a", "b", "twin"))
    rows = AttributionRows()
    first = rows.of(a)
    assert rows.of(a) is first and reads == ["a.parquet"]  # the current cell is read once
    twin = rows.twin(t)
    assert list(twin) == ["twin/0", "twin/1", "twin/2"]
    assert all(set(r) == set(TWIN_FIELDS) for r in twin.values())  # not the hit tags
    assert twin["twin/1"] == {"id": "twin/1", "_pred": 1, "_right": False}
    assert rows.of(a) is first  # reading a twin keeps the current cell
    rows.of(b)
    rows.of(a)
    assert reads == ["a.parquet", "twin.parquet", "b.parquet", "a.parquet"]  # a was let go for b
    assert rows.twin(t) is twin  # twins stay for later cells
    assert reads.count("twin.parquet") == 1
