"""Table 7's examples through the attribution's answer flags and the run report's error-type table: the
paper's types come out under the paper's names, marked as the paper's, and each count's share of the
cell's errors is printed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from biorab.attribution.answers import answer_flags
from biorab.common.records import Hit, Prediction
from biorab.ral.specs.cell_records import CellPlan, CellResult
from biorab.runner.scoring.run_report import error_type_table

# Table 7 (ADE and GIT rows) verbatim, written as head|relation|tail; the GIT row gives the tail only, the
# head and relation around it are ours.
TABLE7 = [
    ("olanzapine|dosage|20-mg daily",
     "olanzapine|dosage|rls symptoms that were initially caused by a 20-mg dail"),
    ("tamoxifen|dosage|high-dose", "tamoxifen|effect|retinal changes."),
    ("adrenaline|inhibits|alkaline phosphatase", "alkaline phosphatase|interacts with|adrenaline"),
    ("adocbl|interacts_with|glycerol dehydratase",
     "adocbl|interacts_with|adenosylcobalamin.. retrieved sentence: glycerol dehydratase"),
]


def _errors(gold: str, answer: str, hits: list[Hit]) -> dict[str, int]:
    flags = answer_flags("triple_extraction", gold, Prediction(answer, answer, True), hits, [
        {"corrupted": False} for _ in hits])
    assert flags.error_types is not None
    return {n: c for n, c in flags.error_types.items() if c}


def test_table7_through_the_answer_flags() -> None:
    assert [_errors(gold, answer, []) for gold, answer in TABLE7] == [
        {"redundant_span": 1}, {"error_generation": 1}, {"error_generation": 1}, {"echoed_scaffold": 1}]


def test_a_retrieved_sentence_in_the_answer_is_an_echo() -> None:
    hit = Hit("ade/train/7", 1.0, 0, "Olanzapine raised the  RLS symptoms.", None, "ade")
    answer = "olanzapine|effect|olanzapine raised the rls symptoms. rls symptoms"
    assert _errors("olanzapine|effect|rls symptoms", answer, [hit]) == {"echoed_scaffold": 1}
    assert _errors("olanzapine|effect|rls symptoms", answer, []) == {"redundant_span": 1}


def test_report_table_marks_origins_and_shares(tmp_path: Path) -> None:
    counts = sum((Counter(_errors(gold, answer, [])) for gold, answer in TABLE7), Counter())
    names = ["echoed_scaffold", "redundant_span", "wrong_tail", "error_generation", "missing_triple"]
    plan = CellPlan("c1", "ade-test__unlabeled", "triple_extraction", 0, "robust", None)
    cell = CellResult(plan, 4, {}, 0, 0, tmp_path / "p.parquet",
                      extra={"attribution": {"error_types": {n: counts.get(n, 0) for n in names}}})
    lines = error_type_table("triple_extraction", [cell])
    assert lines[1].startswith("Error types of triple_extraction (the paper's are §2.8, Table 7's), per cell")
    assert lines[3] == ("| cell | errors | echoed scaffold (paper) | redundant span (paper) "
                        "| wrong tail (ours) | error generation (paper) | missing triple (ours) |")
    # 4 errors: 1 echo, 1 redundant span, 2 error generation (25 %, 25 %, 50 %); no rates computed here
    assert lines[5] == ("| ade-test__unlabeled | 4 | 1 (25%): n/a | 1 (25%): n/a | 0 (0%): n/a "
                        "| 2 (50%): n/a | 0 (0%): n/a |")


def test_multilabel_table_is_ours_not_section_2_8(tmp_path: Path) -> None:
    plan = CellPlan("c2", "sdoh-test__none", "multilabel_classification", 0, "robust", None)
    cell = CellResult(plan, 2, {}, 0, 0, tmp_path / "p.parquet",
                      extra={"attribution": {"error_types": {"missing_label": 1, "extra_label": 0}}})
    lines = error_type_table("multilabel_classification", [cell])
    assert "§2.8" not in "\n".join(lines)
    assert lines[1].startswith("Error types of multilabel_classification (ours), per cell")
