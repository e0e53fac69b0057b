"""A cell's final rows chosen in Arrow (`final_table`, issue 45: only the key, error and time columns become
Python objects): the row each instance gets is the one the rules pick, worked out by hand below."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from biorab.common.errors import BioRABError
from biorab.common.records import Example
from biorab.ral.specs.rows import COLUMNS, ROW_SCHEMA, example_row
from biorab.runner.scoring.cell_metrics import final_rows, final_table
from biorab.runner.store.shards import write_shards

CELL = "cell-a"


def _example(i: int, text: str | None = None) -> Example:
    return Example(id=f"ds/test/{i}", task="classification", dataset="ds", split="test",
                   text=text or f"text {i}", label="yes", fields={"sentence": f"s{i}"}, source_line=i + 1)


def _row(example: Example, order: int, gen_text: str, written_at: float, error: str | None = None
         ) -> dict[str, Any]:
    row = example_row(CELL, order, example)
    row.update(gen_text=gen_text, gen_error=error, pred_label="yes", pred_ok=error is None,
               written_at=written_at, attempt="a", prompt="P" * 50)
    return row


def test_each_instance_gets_its_best_row_relabelled(tmp_path: Path) -> None:
    examples = [_example(i) for i in range(4)]
    moved = Example(**{**examples[3].__dict__, "id": "ds/test/7", "source_line": 8})  # same content, old id
    rows = [
        _row(examples[0], 0, "ok0", written_at=1.0),
        _row(examples[0], 0, "failed0", written_at=5.0, error="boom"),  # later, but failed: loses
        _row(examples[1], 1, "old1", written_at=1.0),
        _row(examples[1], 1, "new1", written_at=2.0),  # latest success wins
        _row(_example(2, text="edited away"), 2, "stale2", written_at=9.0),  # another content: never used
        _row(examples[2], 2, "cur2", written_at=1.0),
        _row(moved, 7, "moved3", written_at=1.0),  # the same content under its old id and order
    ]
    write_shards(rows[:3], tmp_path, "a1")
    write_shards(rows[3:], tmp_path, "a2")
    plan: Any = SimpleNamespace(cell_id=CELL, corpus_key=None, label="cell a")

    table = final_table(plan, examples, tmp_path)

    assert table.schema == ROW_SCHEMA
    assert table.column("gen_text").to_pylist() == ["ok0", "new1", "cur2", "moved3"]
    assert table.column("id").to_pylist() == [e.id for e in examples]
    assert table.column("order").to_pylist() == [0, 1, 2, 3]
    assert table.column("source_line").to_pylist() == [1, 2, 3, 4]
    as_dicts = final_rows(plan, examples, tmp_path)
    assert [list(r) for r in as_dicts] == [list(COLUMNS)] * 4
    assert [r["prompt"] for r in as_dicts] == ["P" * 50] * 4


def test_an_instance_without_a_row_is_named(tmp_path: Path) -> None:
    examples = [_example(0), _example(1)]
    write_shards([_row(examples[0], 0, "ok0", written_at=1.0)], tmp_path, "a1")
    plan: Any = SimpleNamespace(cell_id=CELL, corpus_key=None, label="cell a")
    with pytest.raises(BioRABError, match=r"cell a: 1 instance\(s\) have no output row \(first: ds/test/1\)"):
        final_table(plan, examples, tmp_path)
