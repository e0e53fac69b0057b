"""Read a predictions file for `biorab score`: JSONL, one row per instance.

Each row is ``{"id", "task", "gold", "generation"}``, plus optionally ``"scores"`` (label -> number, for
AUROC/AUPRC) and ``"options"`` (QA option texts by letter, so the robust parser can map an answer that
quotes an option's text to its letter). Every problem is a `DataError` naming the file, the 1-based
line and the field.
"""

from __future__ import annotations

import codecs
import json
import math
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.common.file_sniffing import is_parquet, json_error_text

REQUIRED_FIELDS: tuple[str, ...] = ("id", "task", "gold", "generation")


@dataclass(frozen=True)
class ScoreRow:
    """One instance of a predictions file; `line` is its 1-based line number."""

    id: str
    task: str
    gold: str
    generation: str
    line: int
    scores: dict[str, float] | None = None
    options: dict[str, str] | None = None


def read_score_rows(path: str | Path, *, task: str, known_tasks: Collection[str]) -> list[ScoreRow]:
    """Read and validate every row of `path`; rows must all be of `task`, and a row's task one of
    `known_tasks` (the registered tasks, `biorab.tasks.task_names`: handed in, as this package reads no
    task registry). Blank lines are skipped.

    Raises:
        DataError: missing file, non-UTF-8 bytes, bad JSON, a missing or mistyped field, an unknown task,
            a task other than `task`, a duplicate id (naming both lines) or no rows at all.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("predictions file not found", path=path)
    rows: list[ScoreRow] = []
    first_line: dict[str, int] = {}
    # A UTF-8 byte-order mark (written by some editors and spreadsheet exports) is not part of row 1.
    data = path.read_bytes().removeprefix(codecs.BOM_UTF8)
    if is_parquet(data):
        raise DataError("a Parquet file, not JSON lines: `score` reads one {\"id\", \"task\", \"gold\", "
                        "\"generation\"} object per line (a run's predictions/*.parquet are already scored "
                        "in its summary.json)", path=path)
    for number, raw in enumerate(data.split(b"\n"), start=1):
        text = _decode(raw, path, number)
        if not text.strip():
            continue
        row = _row(_json_object(text, path, number), path, number, task, known_tasks)
        if row.id in first_line:
            raise DataError(
                f"duplicate id {row.id!r} (first on line {first_line[row.id]}, again on line {number})",
                path=path,
                line=number,
                field="id",
            )
        first_line[row.id] = number
        rows.append(row)
    if not rows:
        raise DataError("no rows: the predictions file is empty", path=path)
    return rows


def _decode(raw: bytes, path: Path, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 (byte {e.start + 1} of the line)", path=path, line=line) from e


def _json_object(text: str, path: Path, line: int) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON: {json_error_text(e)}", path=path, line=line) from e
    if not isinstance(value, dict):
        raise DataError(f"expected a JSON object, got {type(value).__name__}", path=path, line=line)
    return value


def _row(value: dict[str, Any], path: Path, line: int, task: str, known_tasks: Collection[str]) -> ScoreRow:
    for name in REQUIRED_FIELDS:
        if name not in value:
            raise DataError("missing field", path=path, line=line, field=name)
        allowed = (str, int) if name == "id" else (str,)
        if not isinstance(value[name], allowed) or isinstance(value[name], bool):
            raise DataError(
                f"expected a string, got {type(value[name]).__name__}", path=path, line=line, field=name
            )
    if value["task"] not in known_tasks:
        raise DataError(
            f"unknown task {value['task']!r}; known tasks: {', '.join(known_tasks)}",
            path=path,
            line=line,
            field="task",
        )
    if value["task"] != task:
        raise DataError(
            f"task {value['task']!r} differs from --task {task!r}", path=path, line=line, field="task"
        )
    return ScoreRow(
        id=str(value["id"]),
        task=value["task"],
        gold=value["gold"],
        generation=value["generation"],
        line=line,
        scores=_scores(value.get("scores"), path, line),
        options=_options(value.get("options"), path, line),
    )


def _scores(raw: Any, path: Path, line: int) -> dict[str, float] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise DataError("expected an object mapping label -> number", path=path, line=line, field="scores")
    for label, number in raw.items():
        if isinstance(number, bool) or not isinstance(number, int | float) or math.isnan(number):
            raise DataError(f"score of label {label!r} is not a number", path=path, line=line, field="scores")
    return {str(k): float(v) for k, v in raw.items()}


def _options(raw: Any, path: Path, line: int) -> dict[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        message = "expected an object mapping option letter -> text"
        raise DataError(message, path=path, line=line, field="options")
    return {str(k): v for k, v in raw.items()}
