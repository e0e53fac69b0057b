"""The source-file readers: gzip, JSON Lines, JSON arrays and CSV/TSV, with exact line numbers."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.datasets.readers import read_delimited, read_json_array, read_json_records, read_jsonl

ROWS = [{"text": f"sentence {i}", "label": "y"} for i in range(200)]


def _jsonl_bytes(rows: list[dict[str, str]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_gzipped_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(gzip.compress(_jsonl_bytes(ROWS)))
    rows = list(read_jsonl(path))
    assert [r.data for r in rows] == ROWS
    assert (rows[-1].line, rows[-1].position, rows[-1].item) == (200, 200, None)


def test_file_that_is_not_gzip(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(_jsonl_bytes(ROWS[:2]))
    with pytest.raises(DataError, match=r"rows.jsonl.gz, line 1: not a valid gzip file") as info:
        list(read_jsonl(path))
    assert info.value.path == str(path)


def test_truncated_gzip(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    data = gzip.compress(_jsonl_bytes(ROWS))
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="not a valid gzip file") as info:
        list(read_jsonl(path))
    assert info.value.line is not None and info.value.line >= 1


def test_jsonl_rows_must_be_objects(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2: expected a JSON object, got list"):
        list(read_jsonl(path))


def test_pretty_printed_array_lines(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(json.dumps(ROWS[:3], indent=2), encoding="utf-8")
    rows = list(read_json_array(path))
    # json.dumps(indent=2): "[", then each object takes 4 lines ("{", two keys, "}").
    assert [(r.line, r.item, r.position) for r in rows] == [(2, 1, 1), (6, 2, 2), (10, 3, 3)]


def test_json_records_detects_array_or_lines(tmp_path: Path) -> None:
    array, lines = tmp_path / "a.json", tmp_path / "l.json"
    array.write_text("  \n" + json.dumps(ROWS[:2]), encoding="utf-8")
    lines.write_bytes(_jsonl_bytes(ROWS[:2]))
    assert [r.data for r in read_json_records(array)] == ROWS[:2]
    assert [r.data for r in read_json_records(lines)] == ROWS[:2]
    assert [r.item for r in read_json_records(array)] == [1, 2]


def test_csv_line_numbers_with_multiline_cells(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text('text,label\n"two\nlines",y\n\nplain,n\n', encoding="utf-8")
    rows = list(read_delimited(path))
    assert [(r.data["text"], r.line) for r in rows] == [("two\nlines", 2), ("plain", 5)]


def test_tsv(tmp_path: Path) -> None:
    path = tmp_path / "rows.tsv"
    path.write_text("text\tlabel\na, b\ty\n", encoding="utf-8")
    assert [r.data for r in read_delimited(path, "\t")] == [{"text": "a, b", "label": "y"}]


def test_csv_ragged_rows(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("text,label\nok,y\ntoo,many,cells\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"rows.csv, line 3: 3 cells, but the header has 2"):
        list(read_delimited(path))
    path.write_text("text,label\nok,y\nshort\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3, field 'label': row has fewer cells"):
        list(read_delimited(path))


def test_empty_csv(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="header row is required"):
        list(read_delimited(path))


def test_utf8_byte_order_mark_is_not_part_of_the_first_row(tmp_path: Path) -> None:
    bom = b"\xef\xbb\xbf"
    csv_path = tmp_path / "export.csv"
    csv_path.write_bytes(bom + b"note,label\nlives alone,yes\n")
    assert [dict(r.data) for r in read_delimited(csv_path)] == [{"note": "lives alone", "label": "yes"}]
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_bytes(bom + b'{"text": "a"}\n{"text": "b"}\n')
    assert [(r.line, r.data["text"]) for r in read_jsonl(jsonl)] == [(1, "a"), (2, "b")]
    array = tmp_path / "rows.json"
    array.write_bytes(bom + b'[{"text": "a"},\n {"text": "b"}]')
    assert [(r.item, r.line) for r in read_json_records(array)] == [(1, 1), (2, 2)]
    gz = tmp_path / "rows.jsonl.gz"
    gz.write_bytes(gzip.compress(bom + b'{"text": "a"}\n'))
    assert [r.data["text"] for r in read_jsonl(gz)] == ["a"]
