"""`indication_paths.yaml` is rebuilt from the per-MoA files by the staging rule, byte for byte (on a
synthetic tree whose expected bytes are written out by hand), malformed inputs are named, and the packaged
manifest pins the upstream folder and the sha256 of its 4,847 files.

The full check on the real files is `scripts/check_drugmechdb_rebuild.py` (it needs a copy of the
upstream repository; its output is quoted in docs/datasets.md)."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.fetching import load_manifest
from biorab.fetching.drugmechdb_paths import assemble
from biorab.fetching.parts import read_sha256_list
from tests.support.drugmechdb_tree import EXPECTED, write_tree

COMMIT = "b83cc5ddb6803ed4fb32a5355150d0469647f904"


def test_assemble_follows_the_index_order_and_the_staging_key_rules(tmp_path: Path) -> None:
    assert assemble(write_tree(tmp_path / "paths")) == EXPECTED
    assert (
        hashlib.sha256(EXPECTED).hexdigest()
        == "e5d09b7243e0297c1a135abbfca295a32f44a42e0ad1199db5369f3325afa95c"
    )


def test_assemble_names_the_missing_or_malformed_file(tmp_path: Path) -> None:
    folder = write_tree(tmp_path / "paths")
    (folder / "DB0001_MESH_D1_1.yaml").unlink()
    with pytest.raises(
        DataError,
        match=re.escape(f"{folder / 'DB0001_MESH_D1_1.yaml'}: file not found (it is listed in _index.yaml)"),
    ):
        assemble(folder)

    (folder / "DB0001_MESH_D1_1.yaml").write_text("directed: true\nnodes: []\n")
    with pytest.raises(
        DataError,
        match=re.escape(
            f"{folder / 'DB0001_MESH_D1_1.yaml'}, field 'graph': expected a mapping with a 'graph' mapping"
        ),
    ):
        assemble(folder)

    (folder / "_index.yaml").write_text("- id: X\n  file: ../X.yaml\n")
    with pytest.raises(
        DataError,
        match=re.escape(
            f"{folder / '_index.yaml'}, field 'file': row 1: 'file' must be a file name ending in .yaml, "
            "got '../X.yaml'"
        ),
    ):
        assemble(folder)


def test_the_manifest_pins_the_upstream_folder_and_every_files_sha256() -> None:
    manifest = load_manifest()
    (entry,) = [f for f in manifest.files if f.parts is not None]
    assert (entry.path, entry.size, entry.sha256) == (
        "drugmechdb/indication_paths.yaml",
        7272248,
        "e23c254111003dd61c1f3497b5a75a8fd5beba3cd9f2267415fc4bccfaca6d20",
    )
    assert entry.url is None and entry.mirror_only is None and entry.builder is None
    assert manifest.sources[entry.source or ""] == {
        "repo": "SuLab/DrugMechDB-agentic",
        "commit": COMMIT,
        "licence": "CC0 1.0 Universal",
    }
    assert entry.parts is not None
    assert (
        entry.parts.base_url
        == f"https://raw.githubusercontent.com/SuLab/DrugMechDB-agentic/{COMMIT}/kb/paths/"
    )
    listed = read_sha256_list(entry.parts.sha256_list)
    assert len(listed) == 4847 and len({name for name, _ in listed}) == 4847
    assert listed[0] == ("_index.yaml", "3de3affdf47c88f6211bbc34ae7e523d086add912f7d4a9d2332563dee677f5d")
    assert listed[1] == (
        "B02362_MESH_D003882_1.yaml",
        "747e072b81176e49f4302ac0ed889a60eef1ed8bc35329c897193065bb5b8246",
    )
    assert all(name.endswith(".yaml") and "/" not in name for name, _ in listed)
    # The whole list, pinned (it is what `zcat LIST | sha256sum -c` checks in a kb/paths folder).
    text = gzip.decompress(entry.parts.sha256_list.read_bytes())
    assert (
        hashlib.sha256(text).hexdigest() == "1864aae416b1c89e69cef54f5fd3d97b19b49a74afdc2a7e3e596116be0bb19d"
    )
    assert not [f.path for f in manifest.files if f.mirror_only]


def test_a_malformed_sha256_list_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "list.sha256.gz"
    bad.write_bytes(gzip.compress(b"%s  _index.yaml\nabc X.yaml\n" % (b"0" * 64)))
    with pytest.raises(DataError, match=re.escape(f"{bad}, line 2: expected 'SHA256  NAME'")):
        read_sha256_list(bad)
