"""``biorab drugmech prompts`` and ``biorab drugmech score`` end to end through the console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biorab.drugmech.prompts.texts import EL_OPTIONS
from tests.support.golden import GOLDEN

REPO = Path(__file__).resolve().parents[2]
BIORAB = [sys.executable, "-c", "from biorab.cli.main import main; main()"]
WHY = "A long explanation of the mechanism that is more than long enough to pass the length checks. " * 2


def _run(args: list[str], drugmechdb_dir: Path, drugmechcf_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "BIORAB_DRUGMECHDB_DIR": str(drugmechdb_dir),
        "BIORAB_DRUGMECHCF_DIR": str(drugmechcf_dir),
    }
    return subprocess.run([*BIORAB, *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)


def test_prompts_index_prints_the_golden_prompt(drugmechdb_dir: Path, drugmechcf_dir: Path) -> None:
    done = _run(
        ["drugmech", "prompts", "delete_pos_ppi_r250", "--world", "closed", "--index", "0"],
        drugmechdb_dir,
        drugmechcf_dir,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == (GOLDEN / "prompts/delete_pos_ppi_0_closed.txt").read_text()


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_prompts_writes_jsonl(tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path) -> None:
    out = tmp_path / "prompts.jsonl"
    done = _run(
        ["drugmech", "prompts", "factuals_neg_r1k", "--out", str(out)], drugmechdb_dir, drugmechcf_dir
    )
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1000 and rows[999]["index"] == 999
    assert set(rows[0]) == {"query_file", "index", "mode", "prompt"}
    assert (
        rows[0]["prompt"] == (GOLDEN / "prompts/factual_neg_0_NAMED_DISEASE.txt").read_text()
    )
    failed = _run(
        ["drugmech", "prompts", "factuals_neg_r1k", "--mode", "ANONYMIZED_DISEASE", "--index", "0"],
        drugmechdb_dir,
        drugmechcf_dir,
    )
    assert failed.returncode == 2
    assert "needs PrimeKG disease neighbours" in failed.stderr
    assert failed.stderr.startswith(f"error: {drugmechcf_dir / 'release' / 'factuals_neg_r1k.json'}: row 0: ")
    # A whole-file render that fails leaves no partial output file.
    failed = _run(
        ["drugmech", "prompts", "factuals_neg_r1k", "--mode", "ANONYMIZED_DISEASE", "--out", str(out) + "2"],
        drugmechdb_dir,
        drugmechcf_dir,
    )
    assert failed.returncode == 2 and "row 0: " in failed.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prompts.jsonl"]


RESPONSES = [
    {"query_file": "delete_pos_ppi_r250", "index": 0, "response": WHY + "\n\nSummary: Partially Blocked"},
    {
        "query_file": "change_pos_dpi_r250.json",
        "index": 5,
        "response": WHY + "\n\n## Summary\n" + EL_OPTIONS["Contra-indicated"],
    },
    {"query_file": "delete_neg_dpi_r250", "index": 0, "response": "Not sure."},
    {
        "query_file": "AddLink_neg_dpi_r1k",
        "index": 0,
        "response": "NO supporting beneficial Mechanism of Action found.",
    },
    {
        "query_file": "AddLink_pos_ppi_r1k",
        "index": 0,
        "response": (
            "YES.\nDrug: Tolazoline | negatively regulates | Protein: Alpha-1A adrenergic receptor\n"
            "Protein: Alpha-1A adrenergic receptor | increases activity of | Protein: DNA gyrase subunit A\n"
            "Protein: DNA gyrase subunit A | causes | Disease: Bacterial Pneumonia"
        ),
    },
    {"query_file": "factuals_neg_r1k", "index": 7, "response": "NO.", "finish_reason": "length"},
]


def _row(file: str, index: int, **kw: object) -> dict[str, object]:
    base = {
        "query_file": file,
        "index": index,
        "parsed": True,
        "option": None,
        "yes_no": None,
        "interior_node_match": None,
        "reduced_edge_match": None,
        "correct_strict": False,
        "correct_relaxed": None,
    }
    return {**base, **kw}


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
@pytest.mark.parametrize("parser", ["robust", "strict_original"])
def test_score_json_is_pinned(
    parser: str, tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RESPONSES) + "\n")
    done = _run(
        ["drugmech", "score", str(path), "--json", "--parser", parser, "--n-resamples", "500"],
        drugmechdb_dir,
        drugmechcf_dir,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    robust = parser == "robust"
    assert out["rows"] == [
        # The key-only summary says Partially Blocked: robust reads it; strict repeats the original misparse
        # (it matches the explanation instead and finds Fully Blocked, which happens to be "correct").
        _row(
            "delete_pos_ppi_r250",
            0,
            option="Partially Blocked" if robust else "Fully Blocked",
            correct_strict=not robust,
            correct_relaxed=True,
        ),
        _row(
            "change_pos_dpi_r250.json",
            5,
            option="Contra-indicated",
            correct_strict=True,
            correct_relaxed=True,
        ),
        _row("delete_neg_dpi_r250", 0, parsed=False, correct_relaxed=False),
        _row("AddLink_neg_dpi_r1k", 0, yes_no="NO", correct_strict=True),
        # 3 of the 4 interior nodes are in the answer's graph but the sink is forced onto the disease, so
        # Alpha-1A and the gyrase map (2/4); the reduced reference drug->a1a->gyr->dis holds fully.
        _row(
            "AddLink_pos_ppi_r1k",
            0,
            yes_no="YES",
            interior_node_match=0.5,
            reduced_edge_match=1.0,
            correct_strict=True,
        ),
        {**_row("factuals_neg_r1k", 7, parsed=False), "incomplete": True},
    ]
    acc = out["accuracy"]
    assert (acc["n"], acc["n_unparsed"], acc["n_incomplete"]) == (6, 1, 1)
    assert len(acc["cells"]) == 6
    groups = {g["group"]: g for g in acc["groups"]}
    # Delete/Invert files count 4 times beside Add-Link: 4 + 4 + 4 + 1 + 1 = 14 samples.
    assert groups["All counterfactuals"]["n"] == 14
    strict_correct = (0 if robust else 4) + 4 + 0 + 1 + 1
    assert groups["All counterfactuals"]["mean"] == pytest.approx(strict_correct / 14, abs=0.03)
    # The exact shape: top level {"rows", "accuracy"}; the parser mode is recorded inside accuracy.
    assert set(out) == {"rows", "accuracy"} and acc["parser"] == parser


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_score_errors_exit_2_and_name_the_line(
    tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(
        b'{"query_file": "delete_pos_dpi_r250", "index": 0, "response": "ok"}\n'
        b'{"query_file": "delete_pos_dpi_r250", "index": 1, "response": "caf\xe9"}\n'
    )
    done = _run(["drugmech", "score", str(path)], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {path}, line 2: not valid UTF-8")
    path.write_text('{"query_file": "nope", "index": 0, "response": "x"}\n')
    done = _run(["drugmech", "score", str(path)], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 2 and "line 1, field 'query_file'" in done.stderr
    path.write_text('{"query_file": "factuals_pos_r1k", "index": 1000, "response": "x"}\n')
    done = _run(["drugmech", "score", str(path)], drugmechdb_dir, drugmechcf_dir)
    assert (
        done.returncode == 2 and "index 1000 is out of range for factuals_pos_r1k (1000 rows)" in done.stderr
    )
    done = _run(["drugmech", "score", str(path), "--parser", "loose"], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 2 and "unknown parser 'loose'" in done.stderr


def test_score_table(tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path) -> None:
    path = tmp_path / "responses.jsonl"
    path.write_text(
        json.dumps(
            {"query_file": "delete_neg_ppi_r250", "index": 3, "response": WHY + "\n\nSummary: No Effect"}
        )
        + "\n"
    )
    done = _run(["drugmech", "score", str(path)], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 0, done.stderr
    assert "1 responses, 0 unparsed, 0 incomplete" in done.stdout
    assert "delete_neg_ppi_r250" in done.stdout and "1.000" in done.stdout


def test_prompts_for_negatives_with_a_user_primekg(
    tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    header = (
        "relation,display_relation,x_index,x_id,x_type,x_name,x_source,y_index,y_id,y_type,y_name,y_source"
    )
    rows = [
        "disease_phenotype_positive,present,1,20989,disease,hpfh,MONDO,2,1,effect/phenotype,anemia,HPO",
        "disease_protein,associated with,1,20989,disease,hpfh,MONDO,3,3043,gene/protein,HBB,NCBI",
        "contraindication,contraindication,4,DB00203,drug,Sildenafil,DrugBank,1,20989,disease,hpfh,MONDO",
    ]
    kg = tmp_path / "kg.csv"
    kg.write_text("\n".join([header, *rows]) + "\n")
    args = ["drugmech", "prompts", "factuals_neg_r1k", "--index", "0", "--primekg", str(kg)]
    done = _run([*args, "--mode", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 0, done.stderr
    assert (
        "-Real Data-\n######################\n"
        "I would like to find a treatment for the disease Hereditary Persistence Of Fetal Hemoglobin,\n"
        "which is associated with the Phenotype: Anemia; and the Protein: HBB.\n"
        "Will the drug Sildenafil be useful in treating this disease?\n"
    ) in done.stdout


def test_score_matcher_option(tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path) -> None:
    # "gyrase" names the reference's "DNA gyrase subunit A (Streptococcus pneumoniae)": below the TF-IDF
    # threshold (3 of the 4 interior nodes map), a full token-set match for rapidfuzz (4 of 4).
    answer = (
        "YES.\nDrug: Tolazoline | negatively regulates | Protein: Alpha1A receptor\n"
        "Protein: Alpha1A receptor | increases activity of | Protein: gyrase\n"
        "Protein: gyrase | participates in | Biological Process: DNA replication\n"
        "Biological Process: DNA replication | occurs in | Organism: Streptococcus pneumoniae\n"
        "Organism: Streptococcus pneumoniae | causes | Disease: Bacterial Pneumonia"
    )
    path = tmp_path / "responses.jsonl"
    path.write_text(json.dumps({"query_file": "AddLink_pos_ppi_r1k", "index": 0, "response": answer}) + "\n")
    for matcher, interior in (("tfidf", 0.75), ("rapidfuzz", 1.0)):
        done = _run(
            ["drugmech", "score", str(path), "--json", "--matcher", matcher], drugmechdb_dir, drugmechcf_dir
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        (row,) = out["rows"]
        assert (row["interior_node_match"], row["reduced_edge_match"]) == (interior, 1.0)
        assert out["accuracy"]["matcher"] == matcher
    done = _run(["drugmech", "score", str(path), "--matcher", "fuzzy"], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 2 and "unknown matcher 'fuzzy'; allowed: tfidf, rapidfuzz" in done.stderr


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_respond_through_a_backend_then_score(
    tmp_path: Path, drugmechdb_dir: Path, drugmechcf_dir: Path
) -> None:
    # The shipped fake backend answers every prompt "Summary: Fully Blocked" and fails row 3 on purpose.
    params = {"answer": WHY + "\n\nSummary: Fully Blocked", "fail_ids": ["delete_neg_ppi_r250/3"]}
    out = tmp_path / "responses.jsonl"
    args = ["drugmech", "respond", "delete_neg_ppi_r250", "--backend", "fake", "--out", str(out)]
    args += ["--runs", "2"]
    done = _run([*args, "--backend-params", json.dumps(params)], drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 0, done.stderr
    assert "warning: 2 backend calls failed (first: run 0, row 3: fake backend: injected fault" in done.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 500 and [r["run"] for r in rows[249:251]] == [0, 1]
    assert rows[0] == {
        "query_file": "delete_neg_ppi_r250",
        "index": 0,
        "response": params["answer"],
        "world": "open",
        "run": 0,
        "finish_reason": "stop",
    }
    assert (rows[3]["response"], rows[3]["finish_reason"]) == ("", "error")
    score = ["drugmech", "score", str(out), "--json", "--n-resamples", "50"]
    done = _run(score, drugmechdb_dir, drugmechcf_dir)
    assert done.returncode == 0, done.stderr
    (cell,) = json.loads(done.stdout)["accuracy"]["cells"]
    # Negatives want "No Effect": every answer is wrong; the failed call is reported as incomplete.
    got = (cell["runs"], cell["n"], cell["n_incomplete"], cell["accuracy_strict"]["mean"])
    assert got == (2, 500, 2, 0.0)
    assert cell["option_counts"] == {"Fully Blocked": 498}
    failed = _run(
        ["drugmech", "respond", "factuals_neg_r1k", "--mode", "ANONYMIZED_DISEASE", "--backend", "fake",
         "--out", str(tmp_path / "never.jsonl")],
        drugmechdb_dir,
        drugmechcf_dir,
    )
    assert failed.returncode == 2 and "row 0: " in failed.stderr and "needs PrimeKG" in failed.stderr
    assert not (tmp_path / "never.jsonl").exists()
    bad = _run([*args[:-2], "--backend-params", "no-such.json"], drugmechdb_dir, drugmechcf_dir)
    assert bad.returncode == 2
    assert "key '--backend-params': not a JSON object and not a readable file" in bad.stderr
