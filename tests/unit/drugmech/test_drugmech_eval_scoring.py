"""Per-sample correctness (spec §5.4, §11), the responses reader's errors, and the accuracy report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.prompts.texts import EL_OPTIONS
from biorab.drugmech.queries.query_files import load_release_file
from biorab.drugmech.scoring.accuracy_tables import accuracy_report
from biorab.drugmech.scoring.correctness import score_answer
from biorab.drugmech.scoring.responses import read_responses, score_responses

WHY = "A long explanation of the mechanism that is more than long enough to pass the length checks. " * 2


def _summary(key: str) -> str:
    return WHY + "\n\nSummary:\n" + EL_OPTIONS[key]


@pytest.mark.parametrize(
    ("file", "key", "strict", "relaxed"),
    [
        ("delete_pos_dpi_r250", "Fully Blocked", True, True),
        ("delete_pos_dpi_r250", "Partially Blocked", False, True),
        ("delete_pos_dpi_r250", "Contra-indicated", False, False),
        ("change_pos_ppi_r250", "Contra-indicated", True, True),
        ("change_pos_ppi_r250", "Fully Blocked", True, True),
        ("change_pos_ppi_r250", "Partially Blocked", False, True),
        ("delete_neg_ppi_r250", "No Effect", True, True),
        ("change_neg_dpi_r250", "Partially Blocked", False, False),
    ],
)
def test_option_correctness_table(
    file: str, key: str, strict: bool, relaxed: bool, drugmechcf_dir: Path
) -> None:
    query = load_release_file(file, release_dir=drugmechcf_dir).queries[0]
    s = score_answer(query, _summary(key))
    assert (s.option, s.correct_strict, s.correct_relaxed, s.yes_no, s.reduced_edge_match) == (
        key,
        strict,
        relaxed,
        None,
        None,
    )


def test_unparsed_option_is_wrong_everywhere(drugmechcf_dir: Path) -> None:
    query = load_release_file("change_pos_dpi_r250", release_dir=drugmechcf_dir).queries[0]
    s = score_answer(query, "I would rather not say.")
    assert (s.parsed, s.option, s.correct_strict, s.correct_relaxed) == (False, None, False, False)


def test_yes_no_correctness_for_negatives(drugmechcf_dir: Path) -> None:
    addlink_neg = load_release_file("AddLink_neg_ppi_r1k", release_dir=drugmechcf_dir).queries[0]
    assert score_answer(addlink_neg, "NO supporting beneficial Mechanism of Action found.").correct_strict
    assert not score_answer(addlink_neg, "YES.\nDrug: A | b | Protein: C").correct_strict
    factual_neg = load_release_file("factuals_neg_r1k", release_dir=drugmechcf_dir).queries[0]
    s = score_answer(factual_neg, "NO supporting Mechanism of Action found.")
    assert (s.yes_no, s.correct_strict, s.interior_node_match) == ("NO", True, None)
    note = score_answer(factual_neg, "Note: no.", parser="strict_original")
    assert note.correct_strict  # the original's prefix match reads "Note" as NO
    assert not score_answer(factual_neg, "Note: no.").parsed


def _jsonl(tmp_path: Path, rows: list[object], extra: bytes = b"") -> Path:
    path = tmp_path / "responses.jsonl"
    path.write_bytes(b"\n".join(json.dumps(r).encode() for r in rows) + b"\n" + extra)
    return path


def _score(path: Path, drugmechcf_dir: Path) -> list:
    return score_responses(read_responses(path), path=path, release_dir=drugmechcf_dir)


def test_reader_errors_name_the_line(tmp_path: Path, drugmechcf_dir: Path) -> None:
    ok = {"query_file": "delete_pos_dpi_r250", "index": 0, "response": "x"}
    path = _jsonl(
        tmp_path, [ok], extra=b'{"query_file": "delete_pos_dpi_r250", "index": 1, "response": "\xff"}\n'
    )
    with pytest.raises(DataError, match=r"line 2: not valid UTF-8"):
        read_responses(path)
    for bad, pattern in [
        ({**ok, "index": True}, r"line 2, field 'index': expected int"),
        ({**ok, "temperature": 1}, r"line 2, field 'temperature': unknown key"),
        ({"query_file": "delete_pos_dpi_r250", "index": 0}, r"line 2, field 'response': missing field"),
        ({**ok, "world": "closedd"}, r"unknown world 'closedd'"),
    ]:
        with pytest.raises(DataError, match=pattern):
            read_responses(_jsonl(tmp_path, [ok, bad]))
    for bad, pattern in [
        ({**ok, "query_file": "delete_pos_xyz"}, r"line 2, field 'query_file'.*unknown query file"),
        ({**ok, "index": 250}, r"line 2, field 'index': index 250 is out of range for delete_pos_dpi_r250"),
        (ok, r"line 2, field 'index': duplicate response .* \(first on line 1\)"),
    ]:
        with pytest.raises(DataError, match=pattern):
            _score(_jsonl(tmp_path, [ok, bad]), drugmechcf_dir)


def test_report_counts_unparsed_and_incomplete_as_wrong(tmp_path: Path, drugmechcf_dir: Path) -> None:
    rows = [
        {"query_file": "delete_pos_dpi_r250", "index": 0, "response": _summary("Fully Blocked"), "run": 0},
        {
            "query_file": "delete_pos_dpi_r250",
            "index": 1,
            "response": _summary("Partially Blocked"),
            "run": 0,
        },
        {"query_file": "delete_pos_dpi_r250", "index": 2, "response": "?", "run": 0},
        {
            "query_file": "delete_pos_dpi_r250",
            "index": 3,
            "response": _summary("Fully Blocked"),
            "run": 0,
            "finish_reason": "length",
        },
        {"query_file": "delete_pos_dpi_r250", "index": 0, "response": _summary("Fully Blocked"), "run": 1},
        {"query_file": "delete_pos_dpi_r250", "index": 1, "response": _summary("Fully Blocked"), "run": 1},
        {"query_file": "delete_pos_dpi_r250", "index": 2, "response": _summary("No Effect"), "run": 1},
        {"query_file": "delete_pos_dpi_r250", "index": 3, "response": _summary("Fully Blocked"), "run": 1},
    ]
    scored = _score(_jsonl(tmp_path, rows), drugmechcf_dir)
    assert scored[3].to_json()["incomplete"] is True and scored[3].score.correct_relaxed is False
    report = accuracy_report(scored, n_resamples=200)
    (cell,) = report["cells"]
    assert (cell["runs"], cell["n"], cell["n_unparsed"], cell["n_incomplete"]) == (2, 8, 1, 1)
    assert cell["accuracy_strict"]["mean"] == pytest.approx((1 / 4 + 3 / 4) / 2)
    assert cell["accuracy_strict"]["std"] == pytest.approx(0.25)
    assert cell["accuracy_relaxed"]["mean"] == pytest.approx((2 / 4 + 3 / 4) / 2)
    assert cell["accuracy_strict_complete_only"]["mean"] == pytest.approx((1 / 3 + 3 / 4) / 2)
    assert cell["option_counts"] == {"Fully Blocked": 4, "No Effect": 1, "None": 1, "Partially Blocked": 1}
    # the paper's rule: the answer cut at `length` is in neither numerator nor denominator, and counted
    paper = accuracy_report(scored, n_resamples=200, exclude_incomplete=True)
    (cell,) = paper["cells"]
    assert (cell["runs"], cell["n"], cell["n_unparsed"], cell["n_incomplete"]) == (2, 7, 1, 1)
    assert cell["accuracy_strict"]["mean"] == pytest.approx((1 / 3 + 3 / 4) / 2)
    assert cell["accuracy_relaxed"]["mean"] == pytest.approx((2 / 3 + 3 / 4) / 2)
    assert (paper["n"], paper["n_incomplete"], paper["exclude_incomplete"]) == (7, 1, True)


def test_groups_upsample_250_sample_files_next_to_addlink(tmp_path: Path, drugmechcf_dir: Path) -> None:
    rows = [
        {"query_file": "delete_pos_dpi_r250", "index": 0, "response": _summary("Fully Blocked")},
        {"query_file": "AddLink_neg_dpi_r1k", "index": 0, "response": "YES."},
    ]
    report = accuracy_report(_score(_jsonl(tmp_path, rows), drugmechcf_dir), n_resamples=100)
    groups = {g["group"]: g for g in report["groups"]}
    assert groups["All counterfactuals"]["n"] == 5  # the delete file counts 4 times beside Add-Link
    assert groups["All counterfactuals"]["ci_low"] == groups["All counterfactuals"]["ci_high"] == 0.8
    assert groups["All positives"]["n"] == 1  # Delete alone: no upsampling
    assert "All closed world" not in groups


def test_pairs_precision_recall_f1(tmp_path: Path, drugmechcf_dir: Path) -> None:
    no = "NO supporting beneficial Mechanism of Action found."
    rows = [
        {"query_file": "AddLink_pos_dpi_r1k", "index": 0, "response": no},  # FN
        {"query_file": "AddLink_neg_dpi_r1k", "index": 0, "response": "YES."},  # FP
        {"query_file": "AddLink_neg_dpi_r1k", "index": 1, "response": no},  # TN
        {"query_file": "delete_pos_dpi_r250", "index": 0, "response": _summary("Fully Blocked")},  # no twin
    ]
    scored = _score(_jsonl(tmp_path, rows), drugmechcf_dir)
    (pair,) = accuracy_report(scored, n_resamples=50)["pairs"]
    assert (pair["query_type"], pair["link"], pair["world"]) == ("ADD_LINK", "dpi", "open")
    assert (pair["tp"], pair["fp"], pair["fn"], pair["tn"]) == (0, 1, 1, 1)
    assert (pair["precision"], pair["recall"], pair["f1"]) == (0.0, 0.0, 0.0)


def test_positive_with_a_graph_needs_drugmechdb(tmp_path: Path, drugmechcf_dir: Path) -> None:
    yes = {"query_file": "factuals_pos_r1k", "index": 2, "response": "YES.\nDrug: A | b | Disease: C"}
    no = {**yes, "index": 3, "response": "NO supporting Mechanism of Action found."}
    assert _score(_jsonl(tmp_path, [no]), drugmechcf_dir)[0].score.yes_no == "NO"  # no reference needed
    with pytest.raises(DataError, match=r"line 2: factuals_pos_r1k\[2\]: .*needs DrugMechDB"):
        _score(_jsonl(tmp_path, [no, yes]), drugmechcf_dir)


def test_responses_to_a_generated_query_file_by_path(tmp_path: Path, drugmechcf_dir: Path) -> None:
    from biorab.drugmech.queries.query_files import write_query_file

    deep = load_release_file("delete_pos_ppi_r250", release_dir=drugmechcf_dir).queries[:2]
    write_query_file(tmp_path / "sets" / "my_delete.json", deep)  # e.g. from `biorab drugmech generate`
    absolute = str(tmp_path / "sets" / "my_delete.json")
    rows = [
        {"query_file": "sets/my_delete.json", "index": 1, "response": _summary("Fully Blocked")},
        {"query_file": absolute, "index": 0, "response": _summary("No Effect")},
        {"query_file": "delete_pos_ppi_r250.json", "index": 1, "response": _summary("No Effect")},  # released
    ]
    scored = _score(_jsonl(tmp_path, rows), drugmechcf_dir)  # relative to the responses file's folder
    assert [(r.response.query_file, r.link, r.score.correct_strict) for r in scored] == [
        ("sets/my_delete.json", "ppi", True),
        (absolute, "ppi", False),
        ("delete_pos_ppi_r250.json", "ppi", False),
    ]
    groups = {g["group"]: g for g in accuracy_report(scored, n_resamples=50)["groups"]}
    assert groups["Delete+Invert deep open positives"]["n"] == 3
    bad = {"query_file": "sets/absent.json", "index": 2, "response": "x"}
    missing = r"line 1, field 'query_file': query file 'sets/absent.json' not found"
    with pytest.raises(DataError, match=missing):
        _score(_jsonl(tmp_path, [bad]), drugmechcf_dir)
    with pytest.raises(DataError, match=r"index 2 is out of range for my_delete \(2 rows\)"):
        _score(_jsonl(tmp_path, [{**bad, "query_file": "sets/my_delete.json"}]), drugmechcf_dir)


def test_cell_graph_means_count_an_undefined_interior_score_as_zero(
    tmp_path: Path, drugmechcf_dir: Path, drugmechdb: DrugMechDB
) -> None:
    # Spec §10.2: interior_node_match is None when the answer's graph has no root or sink, and the original's
    # accumulate_metrics turns None into 0 in the means over true positives.
    answer = (
        "YES.\nDrug: Tolazoline | negatively regulates | Protein: Alpha-1A adrenergic receptor\n"
        "Protein: Alpha-1A adrenergic receptor | increases activity of | Protein: DNA gyrase subunit A\n"
        "Protein: DNA gyrase subunit A | causes | Disease: Bacterial Pneumonia"
    )
    no_root = answer + "\nDisease: Bacterial Pneumonia | causes | Drug: Tolazoline"  # a cycle: no in-degree 0
    rows = [
        {"query_file": "AddLink_pos_ppi_r1k", "index": 0, "response": answer, "run": 0},
        {"query_file": "AddLink_pos_ppi_r1k", "index": 0, "response": no_root, "run": 1},
        {"query_file": "AddLink_pos_ppi_r1k", "index": 1, "response": "NO supporting MoA.", "run": 0},
    ]
    path = _jsonl(tmp_path, rows)
    scored = score_responses(
        read_responses(path), path=path, release_dir=drugmechcf_dir, moas_factory=lambda: drugmechdb
    )
    assert [(r.score.interior_node_match, r.score.reduced_edge_match) for r in scored] == [
        (0.5, 1.0),
        (None, 1.0),
        (None, None),
    ]
    (cell,) = accuracy_report(scored, n_resamples=20)["cells"]
    means = (cell["interior_node_match"], cell["reduced_edge_match"], cell["n_true_positives"])
    assert means == (0.25, 1.0, 2)
