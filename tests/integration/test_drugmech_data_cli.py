"""``biorab drugmech stats`` and ``biorab drugmech generate`` through the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError
from biorab.drugmech.generate.query_sets import meta_path, parse_kind
from biorab.drugmech.queries.query_files import load_query_file

BIORAB = Path(sys.executable).with_name("biorab")


def _run(args: list[str], drugmechdb_dir: Path, drugmechcf_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BIORAB_DRUGMECHDB_DIR": str(drugmechdb_dir),
           "BIORAB_DRUGMECHCF_DIR": str(drugmechcf_dir)}
    return subprocess.run([str(BIORAB), "drugmech", *args], capture_output=True, text=True, env=env,
                          timeout=300, check=False)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_stats_json_reports_the_reference_counts(drugmechdb_dir: Path, drugmechcf_dir: Path) -> None:
    proc = _run(["stats", "--json", "--file", str(drugmechcf_dir / "release" / "delete_pos_dpi_r250.json")],
                drugmechdb_dir, drugmechcf_dir)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    db = out["drugmechdb"]
    assert [db[k] for k in ("moas", "pairs", "drugs", "diseases", "simulatable", "valid")] == [
        4846, 4664, 1612, 744, 3592, 3523]
    assert db["editable_links"]["faithful"]["reduced_db"] == {"links": 2499, "surface": 2151, "deep": 348,
                                                             "moas": 2165}
    assert db["add_link_targets"]["triples"] == 5201
    (file_stats,) = out["files"].values()
    assert file_stats["target_node_types"]["GeneFamily"] == {"count": 68, "pct": 27.2}


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_generate_writes_released_schema_and_sidecar(
    tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    out = tmp_path / "delete_neg_ppi.json"
    proc = _run(["generate", "--kind", "delete_neg_ppi", "--out", str(out), "--seed", "7", "--n", "20",
                 "--mode", "faithful"], drugmechdb_dir, drugmechcf_dir)
    assert proc.returncode == 0, proc.stderr
    queries = load_query_file(out).queries  # part B's loader checks every field of the released schema
    assert len(queries) == 20 and all(q.query_type == "DELETE_LINK" and q.is_negative_sample for q in queries)
    meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
    assert (meta["kind"], meta["seed"], meta["n_samples"]) == ("delete_neg_ppi", 7, 20)
    assert meta["params"]["mode"] == "faithful" and meta["params"]["n"] == 20
    assert meta["drugmechdb_sha256"].startswith("e23c2541")
    first = json.loads(out.read_text(encoding="utf-8"))[0]
    assert list(first) == ["is_negative_sample", "query_type", "drug_id", "disease_id", "drug_name",
                           "disease_name", "edit_link_info"]


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_generate_factual_negatives_from_release(
    tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    out = tmp_path / "neg.json"
    proc = _run(["generate", "--kind", "factuals_neg", "--out", str(out)], drugmechdb_dir, drugmechcf_dir)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == (drugmechcf_dir / "release" / "factuals_neg_r1k.json").read_bytes()


def test_bad_kind_is_a_clear_error(tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path) -> None:
    proc = _run(["generate", "--kind", "delete_pos", "--out", str(tmp_path / "x.json")], drugmechdb_dir,
                drugmechcf_dir)
    assert proc.returncode == 2
    assert "error: key 'kind': unknown kind 'delete_pos'" in proc.stderr
    assert not (tmp_path / "x.json").exists()


def test_parse_kind() -> None:
    assert parse_kind("AddLink_pos_dpi") == ("addlink", False, "surface")
    assert parse_kind("invert_neg_ppi") == ("CHANGE_LINK", True, "deep")
    assert parse_kind("factuals_neg") == ("factual", True, None)
    with pytest.raises(ConfigError):
        parse_kind("delete_pos_mid")
