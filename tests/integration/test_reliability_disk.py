"""Disk and file errors end with ``error: <file>: ...`` and exit 2, never a traceback: a real full tmpfs
mid-run, a real read-only output or cache folder, an output_dir that is a file, a corrupt cache."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from biorab.runner.store.shards import read_all_rows
from tests.support.cli_runs import biorab, shard_count, start, write_config
from tests.support.small_fs import fill, read_only_dir, small_fs

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

SLOW = {"backend": {"name": "fake", "params": {"mode": "choice", "delay_s": 1.5}}}


def last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def test_full_disk_mid_run_names_the_file_then_resumes(tmp_path: Path, data_dir: Path) -> None:
    with small_fs(tmp_path / "small", "2m") as fs:
        cfg = write_config(tmp_path, data_dir, output_dir=str(fs / "runs"), **SLOW)
        run_dir = fs / "runs" / "rel"
        proc = start("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
        deadline = time.monotonic() + 60
        while shard_count(run_dir) < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        filler = fill(fs)
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, err
        line = last_line(err)
        assert line.startswith(f"error: {run_dir}/") and "No space left on device" in line, err
        assert "free space" in line and "Traceback" not in err
        filler.unlink()
        again = biorab("run", str(cfg), "--no-ray", cache=tmp_path / "cache")
        assert again.returncode == 0, again.stderr
        rows = [r for d in (run_dir / "cells").iterdir() for r in read_all_rows(d)]
        assert sorted(r["id"] for r in rows) == [f"semclass/test/{i}" for i in range(6)]


def test_read_only_output_folder(tmp_path: Path, data_dir: Path) -> None:
    with read_only_dir(tmp_path / "ro") as ro:
        cfg = write_config(tmp_path, data_dir, output_dir=str(ro / "runs"))
        for command in ("validate", "run"):
            out = biorab(command, str(cfg), "--no-ray" if command == "run" else "--skip-data",
                         cache=tmp_path / "cache")
            assert out.returncode == 2, out.stderr
            assert last_line(out.stderr).startswith(f"error: {cfg}, key 'output_dir': {ro} is not writable")


def test_read_only_cache_folder(tmp_path: Path, data_dir: Path) -> None:
    with read_only_dir(tmp_path / "ro") as ro:
        cfg = write_config(tmp_path, data_dir)
        out = biorab("run", str(cfg), "--no-ray", cache=ro / "cache")
        assert out.returncode == 2, out.stderr
        line = last_line(out.stderr)
        assert line.startswith(f"error: {ro / 'cache'}: ") and "BIORAB_CACHE_DIR" in line, out.stderr
        assert "Traceback" not in out.stderr


def test_output_dir_that_is_a_file(tmp_path: Path, data_dir: Path) -> None:
    blocker = tmp_path / "runs"
    blocker.write_text("not a folder")
    cfg = write_config(tmp_path, data_dir)
    for command in ("validate", "run"):
        out = biorab(command, str(cfg), cache=tmp_path / "cache")
        assert out.returncode == 2, out.stderr
        assert last_line(out.stderr).startswith(f"error: {cfg}, key 'output_dir': {blocker} is a file")


def test_corrupt_cache_is_moved_aside_and_rebuilt(tmp_path: Path, data_dir: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "runner").mkdir(parents=True)
    (cache / "runner" / "generations.sqlite").write_bytes(b"garbage, not sqlite" * 200)
    out = biorab("run", str(write_config(tmp_path, data_dir)), "--no-ray", cache=cache)
    assert out.returncode == 0, out.stderr
    assert f"{cache / 'runner' / 'generations.sqlite'}: corrupt cache database" in out.stderr
    (aside,) = (cache / "runner").glob("generations.sqlite.corrupt-*")
    assert aside.read_bytes().startswith(b"garbage")
    with sqlite3.connect(cache / "runner" / "generations.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM kv").fetchone()[0] == 6
