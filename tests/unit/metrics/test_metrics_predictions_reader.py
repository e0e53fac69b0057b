"""Reading `biorab score` input files: every bad row is an error naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, DataError, UnknownNameError
from biorab.metrics.predictions_reader import read_score_rows
from biorab.metrics.predictions_scoring import check_golds, label_set
from biorab.tasks import get_task, task_names


def _row(i: int, **changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": f"semclass/test/{i}",
        "task": "classification",
        "gold": "y",
        "generation": "y",
    }
    row.update(changes)
    return row


def _write(path: Path, rows: list[object]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_rows_with_line_numbers_and_skips_blank_lines(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "p.jsonl", [_row(0), "", _row(1, gold="n", scores={"y": -2, "n": -0.1}), _row(2, id=7)]
    )
    rows = read_score_rows(path, task="classification", known_tasks=task_names())
    assert [(r.id, r.line, r.gold) for r in rows] == [
        ("semclass/test/0", 1, "y"),
        ("semclass/test/1", 3, "n"),
        ("7", 4, "y"),
    ]
    assert rows[1].scores == {"y": -2.0, "n": -0.1}
    assert rows[0].scores is None


@pytest.mark.parametrize(
    ("line2", "message"),
    [
        ('{"id": "x", "task": ', r"p.jsonl, line 2: not valid JSON"),
        ("[1, 2]", r"p.jsonl, line 2: expected a JSON object, got list"),
        (
            json.dumps({"id": "x", "task": "classification", "gold": "y"}),
            r"line 2, field 'generation': missing",
        ),
        (json.dumps(_row(1, gold=1)), r"line 2, field 'gold': expected a string, got int"),
        (json.dumps(_row(1, task="summarisation")), r"line 2, field 'task': unknown task 'summarisation'"),
        (
            json.dumps(_row(1, task="qa")),
            r"line 2, field 'task': task 'qa' differs from --task 'classification'",
        ),
        (
            json.dumps(_row(0)),
            r"line 2, field 'id': duplicate id 'semclass/test/0' \(first on line 1, again on line 2\)",
        ),
        (
            json.dumps(_row(1, scores={"y": "high"})),
            r"line 2, field 'scores': score of label 'y' is not a number",
        ),
        (json.dumps(_row(1, scores=[1.0])), r"line 2, field 'scores': expected an object"),
    ],
)
def test_bad_rows_name_file_line_and_field(tmp_path: Path, line2: str, message: str) -> None:
    path = _write(tmp_path / "p.jsonl", [_row(0), line2, _row(2)])
    with pytest.raises(DataError, match=message):
        read_score_rows(path, task="classification", known_tasks=task_names())


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(json.dumps(_row(0)).encode() + b"\n" + b'{"id": "caf\xe9"}\n')
    with pytest.raises(DataError, match=r"p.jsonl, line 2: not valid UTF-8 \(byte 12 of the line\)"):
        read_score_rows(path, task="classification", known_tasks=task_names())


def test_empty_or_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no rows"):
        read_score_rows(_write(tmp_path / "e.jsonl", ["", "  "]), task="qa", known_tasks=task_names())
    with pytest.raises(DataError, match="predictions file not found"):
        read_score_rows(tmp_path / "absent.jsonl", task="qa", known_tasks=task_names())


def test_label_set_resolution(tmp_path: Path) -> None:
    rows = read_score_rows(
        _write(tmp_path / "p.jsonl", [_row(0, gold="y"), _row(1, gold="n")]), task="classification",
        known_tasks=task_names(),
    )
    assert label_set(get_task("classification"), rows) == ("n", "y")
    assert label_set(get_task("classification"), rows, dataset="semclass") == ("y", "n")
    assert label_set(get_task("classification"), rows, labels=[" y", "n ", ""]) == ("y", "n")
    assert label_set(get_task("triple_extraction"), rows) is None
    assert label_set(get_task("triple_extraction"), rows, dataset="ade") == ("effect", "dosage")
    with pytest.raises(ConfigError, match="not both"):
        label_set(get_task("classification"), rows, dataset="semclass", labels=["y"])
    with pytest.raises(ConfigError, match="'pharmkg' is a link_prediction dataset, not classification"):
        label_set(get_task("classification"), rows, dataset="pharmkg")
    with pytest.raises(UnknownNameError, match="Did you mean 'semclass'"):
        label_set(get_task("classification"), rows, dataset="semclas")


def test_gold_checks_name_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.jsonl", [_row(0), _row(1, gold="maybe")])
    rows = read_score_rows(path, task="classification", known_tasks=task_names())
    with pytest.raises(DataError, match=r"line 2, field 'gold': gold label 'maybe' is not in the label set"):
        check_golds(path, get_task("classification"), rows, ("y", "n"))
    triples = [
        _row(0, task="triple_extraction", gold="a|effect|b"),
        _row(1, task="triple_extraction", gold="a|b"),
    ]
    path = _write(tmp_path / "t.jsonl", triples)
    rows = read_score_rows(path, task="triple_extraction", known_tasks=task_names())
    with pytest.raises(DataError, match=r"t.jsonl, line 2, field 'gold': triple line 1 'a\|b' has 2"):
        check_golds(path, get_task("triple_extraction"), rows, None)


def test_utf8_byte_order_mark_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    row = {"id": "1", "task": "qa", "gold": "(A)", "generation": "(A)"}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(row).encode("utf-8") + b"\n")
    rows = read_score_rows(path, task="qa", known_tasks=task_names())
    assert [(r.id, r.line) for r in rows] == [("1", 1)]
