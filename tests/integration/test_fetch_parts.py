"""Fetching a file assembled from many upstream files (DrugMechDB's `indication_paths.yaml`), against a
real HTTP server on 127.0.0.1 serving a synthetic `kb/paths` tree with an injected small manifest:
a corrupted file and a missing one are named and not kept, a dropped download resumes with a Range
request, a rerun downloads only what is missing, the rebuild is installed byte-identical, and a mirror
still serves the assembled file itself."""

from __future__ import annotations

import hashlib
import io
import re
import socket
from pathlib import Path

import pytest

from biorab.fetching import fetch_files
from biorab.fetching.manifest import ManifestFile
from biorab.fetching.parts import PartsSource
from biorab.fetching.progress import FetchProgress
from tests.support.drugmechdb_tree import EXPECTED, FILES, write_sha256_list, write_tree
from tests.support.range_http_server import RangeServer

TARGET = "drugmechdb/indication_paths.yaml"
CORRUPT, MISSING, DROPPED = "DB0001_MESH_D1_1.yaml", "DB0003_MESH_D3_1.yaml", "DB0002_MESH_D2_1.yaml"


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    """The served root: ``kb/paths/`` holds the synthetic tree."""
    write_tree(tmp_path / "upstream" / "kb" / "paths")
    return tmp_path / "upstream"


def entry_for(base_url: str, tmp_path: Path) -> ManifestFile:
    """The injected manifest row: the expected bytes' size and sha256, the server's folder, the list."""
    return ManifestFile(
        path=TARGET,
        size=len(EXPECTED),
        sha256=hashlib.sha256(EXPECTED).hexdigest(),
        source="TEST",
        parts=PartsSource(base_url, write_sha256_list(tmp_path / "l.sha256.gz")),
    )


def test_faults_are_named_then_a_rerun_fetches_only_what_is_missing(upstream: Path, tmp_path: Path) -> None:
    root, staging = tmp_path / "data", tmp_path / "data" / (TARGET + ".parts")
    faults = {
        f"kb/paths/{CORRUPT}": "corrupt",
        f"kb/paths/{MISSING}": "missing",
        f"kb/paths/{DROPPED}": "drop:40",
    }
    with RangeServer(upstream, faults) as server:
        base = f"{server.url}/kb/paths/"
        entry = entry_for(base, tmp_path)
        shown = io.StringIO()
        first = fetch_files([entry], root, progress=FetchProgress(shown))
        assert first.installed == [] and list(first.failed) == [TARGET]
        reason = first.failed[TARGET]
        assert reason.startswith("3 of 4 upstream files failed: ")
        good = FILES[CORRUPT].encode()
        flipped = bytes([good[0] ^ 0xFF]) + good[1:]  # what the server's "corrupt" fault sends
        assert (
            f"{CORRUPT}: sha256 mismatch: expected {hashlib.sha256(good).hexdigest()[:12]}…, got "
            f"{hashlib.sha256(flipped).hexdigest()[:12]}… from {base}{CORRUPT} (not installed)"
        ) in reason
        assert f"{MISSING}: HTTP 404 Not Found from {base}{MISSING}" in reason
        assert (
            f"{DROPPED}: connection dropped after 40 bytes (got 40 of {len(FILES[DROPPED].encode())} in "
            "this attempt); run again to resume"
        ) in reason
        assert reason.endswith(f"; run again to fetch only the rest (verified files are kept in {staging})")
        lines = shown.getvalue().splitlines()
        assert lines[0] == (
            f"fetching {TARGET}: 4 of 4 upstream files from {base} (16 at a time; "
            "0 already here and verified)"
        )
        # Each part's failure as it happens (in completion order), then the file's own.
        assert sorted(line.split(":")[0] for line in lines[1:-1]) == sorted(
            f"FAILED {name}" for name in (CORRUPT, MISSING, DROPPED)
        )
        assert lines[-1] == f"FAILED {TARGET}: {reason}" and len(lines) == 5
        # Only verified files under their names; the dropped one waits as a .part; nothing installed.
        assert sorted(p.name for p in staging.iterdir()) == ["DB0002_MESH_D2_1.yaml.part", "_index.yaml"]
        assert (staging / (DROPPED + ".part")).stat().st_size == 40
        assert not (root / TARGET).exists()

        server.requests.clear()
        server.faults.clear()  # the upstream serves every file correctly again
        shown = io.StringIO()
        second = fetch_files([entry], root, progress=FetchProgress(shown))
        assert second.installed == [TARGET] and second.failed == {}
        assert sorted(server.requests) == sorted(
            [
                (f"kb/paths/{CORRUPT}", None),
                (f"kb/paths/{MISSING}", None),
                (f"kb/paths/{DROPPED}", "bytes=40-"),
            ]
        )
        assert shown.getvalue().splitlines() == [
            f"fetching {TARGET}: 3 of 4 upstream files from {base} (16 at a time; 1 already here "
            "and verified)",
            f"ok     {TARGET}",
        ]
        assert (root / TARGET).read_bytes() == EXPECTED
        assert not staging.exists() and not list(root.rglob("*.tmp"))

        server.requests.clear()
        third = fetch_files([entry], root)
        assert third.present == [TARGET] and server.requests == []


def test_a_mirror_serves_the_assembled_file_itself(upstream: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "drugmechdb").mkdir(parents=True)
    (mirror / TARGET).write_bytes(EXPECTED)
    with RangeServer(upstream) as server:
        report = fetch_files(
            [entry_for(f"{server.url}/kb/paths/", tmp_path)], tmp_path / "data", mirror=str(mirror)
        )
        assert report.installed == [TARGET] and server.requests == []
    assert (tmp_path / "data" / TARGET).read_bytes() == EXPECTED
    assert not (tmp_path / "data" / (TARGET + ".parts")).exists()


def test_no_network_stops_at_the_first_failure(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}/kb/paths/"
    report = fetch_files([entry_for(base, tmp_path)], tmp_path / "data")
    reason = report.failed[TARGET]
    assert re.fullmatch(
        rf"1 of 4 upstream files failed, 3 not finished \(stopped early\): (\S+): no network: cannot reach "
        rf"{re.escape(base)}\1 \(\[Errno 111\] Connection refused\); run again to fetch only the rest "
        rf"\(verified files are kept in {re.escape(str(tmp_path / 'data' / (TARGET + '.parts')))}\)",
        reason,
    )


def test_rebuilt_bytes_other_than_the_manifests_are_not_installed(upstream: Path, tmp_path: Path) -> None:
    with RangeServer(upstream) as server:
        good = entry_for(f"{server.url}/kb/paths/", tmp_path)
        wrong = ManifestFile(path=TARGET, size=good.size, sha256="0" * 64, parts=good.parts)
        report = fetch_files([wrong], tmp_path / "data")
    assert report.failed[TARGET] == (
        "rebuilt bytes differ from the manifest: sha256 "
        f"{hashlib.sha256(EXPECTED).hexdigest()[:12]}…, expected 000000000000… "
        "(not installed)"
    )
    assert not (tmp_path / "data" / TARGET).exists()
    assert len(list((tmp_path / "data" / (TARGET + ".parts")).iterdir())) == 4  # kept: nothing to refetch
