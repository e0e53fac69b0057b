"""File digests: the sha256 of the bytes, remembered per file while its stat signature is unchanged, and a
same-size edit that even restores the old mtime is still seen."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from biorab.file_digests import file_digest, files_digest


def test_digest_is_the_sha256_of_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_bytes(b'{"label": "y"}\n')
    assert file_digest(path) == hashlib.sha256(b'{"label": "y"}\n').hexdigest()
    assert file_digest(str(path)) == file_digest(path)


def test_same_size_edit_with_the_old_mtime_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_bytes(b'{"label": "y"}\n')
    before = path.stat()
    first = file_digest(path)
    path.write_bytes(b'{"label": "n"}\n')  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p` or rsync would leave it
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert file_digest(path) == hashlib.sha256(b'{"label": "n"}\n').hexdigest() != first


def test_files_digest_names_not_paths(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "train.json").write_text("x")
    (b / "train.json").write_text("x")
    here = files_digest({"ds:train.json": a / "train.json"})
    assert here == files_digest({"ds:train.json": b / "train.json"})
    assert here != files_digest({"other:train.json": a / "train.json"})
    # a missing file has a digest of its own, and creating it changes it
    missing = files_digest({"ds:dev.json": a / "dev.json"})
    (a / "dev.json").write_text("")
    assert files_digest({"ds:dev.json": a / "dev.json"}) != missing
