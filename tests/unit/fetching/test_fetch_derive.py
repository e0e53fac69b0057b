"""The derived-file builders rebuild the staged bytes from the staged originals (and the packaged
manifest agrees with the staged files)."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pytest

from biorab.fetching import load_manifest
from biorab.fetching.derive import BUILDERS, gzip_like_staging

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

GZIPPED = [f for f in load_manifest().files if f.transform == "gzip"]
DERIVED = [f for f in load_manifest().files if f.builder]


@pytest.mark.parametrize("entry", GZIPPED, ids=lambda f: f.path)
def test_gzip_like_staging_reproduces_the_staged_gz(entry: object, data_dir: Path) -> None:
    staged = (data_dir.parent / entry.path).read_bytes()  # type: ignore[attr-defined]
    original = gzip.decompress(staged)
    assert hashlib.sha256(original).hexdigest() == entry.source_sha256  # type: ignore[attr-defined]
    assert gzip_like_staging(original) == staged


@pytest.mark.parametrize("entry", DERIVED, ids=lambda f: f.path)
def test_builders_reproduce_the_staged_derived_files(entry: object, data_dir: Path) -> None:
    root = data_dir.parent
    inputs = [(root / p).read_bytes() for p in entry.inputs]  # type: ignore[attr-defined]
    built = BUILDERS[entry.builder](inputs)  # type: ignore[attr-defined]
    assert built == (root / entry.path).read_bytes()  # type: ignore[attr-defined]


def test_gzip_and_derived_counts() -> None:
    assert (len(GZIPPED), len(DERIVED)) == (8, 5)
