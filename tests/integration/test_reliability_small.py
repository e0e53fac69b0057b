"""Small input mistakes end with a clear error and exit 2: duplicate YAML keys, booleans for numbers, an
empty DrugMech responses file, a truncated JSON line, a Parquet file given to `score`; flags are flags."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.cli_runs import biorab, write_config

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_duplicate_yaml_key_is_an_error(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir)
    cfg.write_text(cfg.read_text() + "n_boot: 30\n")  # write_config already set n_boot
    out = biorab("validate", str(cfg), cache=tmp_path)
    assert out.returncode == 2
    line = last_line(out.stderr)
    assert line.startswith(f"error: {cfg}: line ") and "key 'n_boot': duplicate key (first at line" in line


def test_boolean_for_a_number_is_an_error(tmp_path: Path, data_dir: Path) -> None:
    cfg = write_config(tmp_path, data_dir, datasets=[{"name": "semclass", "limit": True}])
    out = biorab("validate", str(cfg), cache=tmp_path)
    assert out.returncode == 2
    assert last_line(out.stderr) == (f"error: {cfg}, key 'datasets.0.limit': Value error, expected a number, "
                                     "got true (a boolean)")


def test_drugmech_score_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "responses.jsonl"
    empty.write_text("\n")
    out = biorab("drugmech", "score", str(empty), cache=tmp_path)
    assert out.returncode == 2 and last_line(out.stderr) == f"error: {empty}: no responses: the file is empty"


def test_truncated_json_message_says_at_once(tmp_path: Path) -> None:
    bad = tmp_path / "preds.jsonl"
    bad.write_text('{"id": "a", "task": "qa", "gold": "(A)", "generation": "(A\n')
    out = biorab("score", str(bad), "--task", "qa", cache=tmp_path)
    assert out.returncode == 2
    assert last_line(out.stderr) == (f"error: {bad}, line 1: not valid JSON: Unterminated string starting "
                                     "at column 56")


def test_score_on_parquet_says_so(tmp_path: Path) -> None:
    path = tmp_path / "preds.parquet"
    pq.write_table(pa.table({"id": ["a"]}), path)
    out = biorab("score", str(path), "--task", "qa", cache=tmp_path)
    assert out.returncode == 2
    assert last_line(out.stderr).startswith(f"error: {path}: a Parquet file, not JSON lines")


def test_flags_are_flags(tmp_path: Path) -> None:
    """No flag shows a ``<bool>`` value to type (every flag of every command: test_cli_help.py)."""
    cases = ((("data", "stats"), "--no-json"), (("run",), "--no-ray"), (("validate",), "--skip-data"))
    for args, flag in cases:
        text = biorab(*args, "--help", cache=tmp_path, COLUMNS="150").stdout
        (line,) = [x for x in text.splitlines() if flag in x]
        assert "<bool>" not in line, line
