"""`biorab data fetch` against a real HTTP mirror on 127.0.0.1 served from the staged data: every file
verified and installed (derived files rebuilt byte-identical), faults reported with exit code 2 and not
installed, a dropped download resumed with a Range request, and a rerun fetching only what is missing."""

from __future__ import annotations

import filecmp
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from biorab.fetching import load_manifest
from tests.support.range_http_server import RangeServer

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

REPO = Path(__file__).resolve().parents[2]
DROPPED = "biorab/ade/test_instruction_container.json"  # the input of ade/test.derived.jsonl
CORRUPT = "biorab/medmcqa/dev.json"
MISSING = "biorab/semclass/raw/sentence_triple_yes_no.csv"


@pytest.fixture
def staged(data_dir: Path, drugmechcf_dir: Path) -> Path:
    """The staged data folder (parent of biorab/, drugmechdb/, drugmechcf/)."""
    assert data_dir.parent == drugmechcf_dir.parent, "the mirror is served from one data folder"
    return data_dir.parent


def fetch(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("BIORAB_DATA_MIRROR", None)
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", "data", "fetch", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_fetch_reports_faults_then_resumes_and_fetches_only_what_is_missing(
    staged: Path, tmp_path: Path
) -> None:
    target = tmp_path / "data"
    faults = {CORRUPT: "corrupt", MISSING: "missing", DROPPED: "drop:100000"}
    with RangeServer(staged, faults) as server:
        first = fetch("biorab", "--mirror", server.url, "--data-dir", str(target))
        assert first.returncode == 2, first.stderr
        errors = sorted(line for line in first.stderr.splitlines() if line.startswith("error: biorab/"))
        assert [e.split(":")[1].strip() for e in errors] == sorted(
            [CORRUPT, MISSING, DROPPED, "biorab/ade/test.derived.jsonl"])
        text = "\n".join(errors)
        assert f"error: {CORRUPT}: sha256 mismatch: expected a2b5f53890f4…" in text
        assert f"error: {MISSING}: HTTP 404 Not Found from {server.url}/{MISSING}" in text
        assert f"error: {DROPPED}: connection dropped after 100000 bytes" in text
        assert "error: biorab/ade/test.derived.jsonl: cannot rebuild: its input " + DROPPED in text
        assert "49 installed, 0 already present and verified, 4 failed" in first.stdout
        assert "error: 4 of 53 files failed (listed above); run the same command again" in first.stderr
        # Nothing unverified at a final path; the dropped file waits as a .part for the resume.
        assert not (target / CORRUPT).exists() and not (target / MISSING).exists()
        assert not (target / DROPPED).exists()
        assert (target / (DROPPED + ".part")).stat().st_size == 100000
        assert not (target / (CORRUPT + ".part")).exists()

        server.requests.clear()
        second = fetch("biorab", "--mirror", server.url, "--data-dir", str(target))
        assert second.returncode == 2
        assert "2 installed, 49 already present and verified, 2 failed" in second.stdout
        # Only the three missing originals were asked for; the dropped one resumed where it stopped.
        assert sorted(server.requests) == sorted([(CORRUPT, None), (MISSING, None),
                                                  (DROPPED, "bytes=100000-")])

    with RangeServer(staged) as server:
        third = fetch("biorab", "--mirror", server.url, "--data-dir", str(target))
    assert third.returncode == 0, third.stderr
    assert "2 installed, 51 already present and verified, 0 failed" in third.stdout
    paths = [f.path for f in load_manifest().select(("biorab",))]
    assert len(paths) == 53
    # Byte-identical to the staged data, the three derived files (rebuilt here) included.
    assert all(filecmp.cmp(target / p, staged / p, shallow=False) for p in paths)
    assert not list(target.rglob("*.part")) and not list(target.rglob("*.tmp"))


def test_fetch_from_a_mirror_folder_rebuilds_derived_files(staged: Path, tmp_path: Path) -> None:
    result = fetch("ade", "drugmechcf", "--mirror", str(staged), "--data-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for derived in ("biorab/ade/test.derived.jsonl",):
        assert filecmp.cmp(tmp_path / derived, staged / derived, shallow=False)
    assert len(list((tmp_path / "drugmechcf" / "release").iterdir())) == 15
    assert "fetching drugmechcf/release/AddLink_neg_dpi_r1k.json (0.7 MB)" in result.stdout  # plain lines


def test_no_network_and_disk_full_are_named(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = fetch("drugmechdb", "--mirror", f"http://127.0.0.1:{port}", "--data-dir", str(tmp_path / "a"))
    assert result.returncode == 2
    assert (f"error: drugmechdb/deprecated_ids.txt: no network: cannot reach http://127.0.0.1:{port}/"
            "drugmechdb/deprecated_ids.txt ([Errno 111] Connection refused)") in result.stderr

    full = tmp_path / "b" / "drugmechdb"
    full.mkdir(parents=True)
    (full / "deprecated_ids.txt.part").symlink_to("/dev/full")  # every write fails with ENOSPC
    with RangeServer(tmp_path) as server:  # serves nothing: the fault must come from the disk first
        (tmp_path / "drugmechdb").mkdir()
        (tmp_path / "drugmechdb" / "deprecated_ids.txt").write_text("x" * 10)
        result = fetch("drugmechdb", "--mirror", server.url, "--data-dir", str(tmp_path / "b"))
    assert f"error: drugmechdb/deprecated_ids.txt: disk full while writing {full}/deprecated_ids.txt.part" \
        in result.stderr


def test_original_sources_are_pinned_commits_with_licences() -> None:
    manifest = load_manifest()
    assert len(manifest.files) == 70
    originals = [f for f in manifest.files if f.url]
    assert len(originals) == 64
    for f in originals:
        commit = manifest.sources[f.source or ""]["commit"]
        assert f.url.startswith("https://raw.githubusercontent.com/") and f"/{commit}/" in f.url
    # indication_paths.yaml is assembled from SuLab/DrugMechDB-agentic's kb/paths files (test_fetch_parts.py).
    assert [f.path for f in manifest.files if f.parts] == ["drugmechdb/indication_paths.yaml"]
    assert not [f.path for f in manifest.files if f.mirror_only]
    assert all(s["licence"] for s in manifest.sources.values())


def test_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    result = fetch("adee", "--data-dir", str(tmp_path))
    assert result.returncode == 2
    assert "error: unknown data set 'adee'. Did you mean 'ade'" in result.stderr
