"""`answer_options`: each DrugMech prompt kind's answers, as the rehearsal's fake draws them, parse in both
parser modes to the answer each option means (spec §9), right and wrong ones alike; a real run's rows carry
no constraint and keep their cell ids (pinned from main before the change); a rehearsal's carry the
options."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.records import OutputConstraint, Prompt
from biorab.drugmech.experiment.cell_slices import drugmech_cells, plan_drugmech
from biorab.drugmech.graph.drugmechdb import DrugMechDB
from biorab.drugmech.parsing.answer_options import answer_constraint, answer_options
from biorab.drugmech.prompts.render import render_prompt
from biorab.drugmech.queries.query_files import Query
from biorab.drugmech.queries.resolver import resolve_query_file
from biorab.drugmech.scoring.correctness import score_answer
from biorab.experiment import ExperimentConfig
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend

PARSERS = ("robust", "strict_original")


@pytest.fixture(autouse=True)
def release(drugmechcf_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_DRUGMECHCF_DIR", str(drugmechcf_dir))


def _query(name: str, index: int = 0) -> Query:
    return resolve_query_file(name, base=Path.cwd()).queries[index]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize(("name", "verdicts"), [
    # (strict correct, parsed option or YES/NO) of each option, in the order the prompt lists them
    ("delete_pos_ppi_r250", [(False, "No Effect"), (False, "Partially Blocked"), (True, "Fully Blocked"),
                             (False, "Contra-indicated")]),
    ("delete_neg_dpi_r250", [(True, "No Effect"), (False, "Partially Blocked"), (False, "Fully Blocked"),
                             (False, "Contra-indicated")]),
    ("change_pos_dpi_r250", [(False, "No Effect"), (False, "Partially Blocked"), (True, "Fully Blocked"),
                             (True, "Contra-indicated")]),
    ("AddLink_neg_ppi_r1k", [(False, "YES"), (True, "NO")]),
])
def test_counterfactual_options_parse_to_their_answer(name: str, verdicts: list[tuple[bool, str]],
                                                      parser: str) -> None:
    query = _query(name)
    got = []
    for text in answer_options(query):
        score = score_answer(query, text, parser=parser)
        assert score.parsed
        got.append((score.correct_strict, score.option or score.yes_no))
    assert got == verdicts


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("mode", ["NAMED_DISEASE", "ANONYMIZED_DISEASE",
                                  "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"])
def test_yes_options_carry_a_one_step_moa(drugmechdb: DrugMechDB, mode: str, parser: str) -> None:
    for name, positive in (("factuals_pos_r1k", True), ("AddLink_pos_dpi_r1k", True), ("factuals_neg_r1k",
                                                                                        False)):
        query = _query(name)
        yes, no = answer_options(query, mode=mode)
        assert yes.startswith("YES.\nDrug: ") and " | treats | Disease: " in yes
        yes_score = score_answer(query, yes, parser=parser, mode=mode, moas=drugmechdb)
        no_score = score_answer(query, no, parser=parser, mode=mode, moas=drugmechdb)
        assert (yes_score.yes_no, no_score.yes_no) == ("YES", "NO")
        assert (yes_score.correct_strict, no_score.correct_strict) == (positive, not positive)
        if positive:  # the graph matcher ran on the answer's drug -> disease edge (no interior node)
            assert yes_score.interior_node_match == 0.0 and yes_score.reduced_edge_match == 0.0


def test_factual_no_option_is_the_prompts_own_sentence() -> None:
    query = _query("factuals_pos_r1k")
    _yes, no = answer_options(query)
    assert f'Say "YES." or "{no}"' in render_prompt(query)
    addlink_no = answer_options(_query("AddLink_pos_dpi_r1k"))[1]
    assert addlink_no == "NO supporting beneficial Mechanism of Action found."


def test_the_fake_draws_each_answer_from_the_options() -> None:
    """`constraint` mode on the real prompts of six fixture rows: every answer one of the row's options,
    the same on a second call, and both options of a YES/NO kind drawn somewhere."""
    fake = FakeBackend(FakeBackend.Params(mode="constraint"))
    drawn: dict[str, set[str]] = {}
    for name in ("delete_pos_ppi_r250", "AddLink_neg_dpi_r1k", "factuals_pos_r1k"):
        for index in range(6):
            query = _query(name, index)
            prompt = Prompt(f"{name}/{index}", render_prompt(query), constraint=answer_constraint(query))
            first, again = (fake.generate([prompt], SamplingParams(max_tokens=4096))[0] for _ in range(2))
            assert first.text in answer_options(query) and first.text == again.text
            drawn.setdefault(name, set()).add(first.text.split()[0])
    assert drawn["AddLink_neg_dpi_r1k"] == {"YES.", "NO"} and drawn["factuals_pos_r1k"] == {"YES.", "NO"}


def _config(**drugmech: object) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": "x", "tracking": {"enabled": False},
        "drugmech": {"query_files": ["delete_pos_ppi_r250", "factuals_pos_r1k"],
                     "modes": ["ANONYMIZED_DISEASE"], "limit": 2, **drugmech},
        "backend": {"name": "vllm", "params": {"model": "m"}},
        "sampling": {"max_tokens": 4096, "temperature": 1.0, "seed": 42}})


def test_real_rows_carry_no_constraint_and_keep_their_cell_ids(tmp_path: Path, drugmechdb_dir: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_DRUGMECHDB_DIR", str(drugmechdb_dir))
    real = _config()
    # the ids main gave these cells before `answer_constraint` existed
    assert [plan.cell_id for _, plan in drugmech_cells(real)] == [
        "dm-delete_pos_ppi_r250__open__run0__55889c4231",
        "dm-factuals_pos_r1k__ANONYMIZED_DISEASE__run0__f3e64594a8"]
    assert "answer_constraint" not in real.model_dump_json()  # its digest and MLflow params as before
    assert all(row["constraint"] is None for s in plan_drugmech(real, tmp_path / "a") for row in s.pending)

    rehearsed = _config(answer_constraint=True)
    slices = plan_drugmech(rehearsed, tmp_path / "b")
    assert {s.plan.cell_id for s in slices}.isdisjoint(p.cell_id for _, p in drugmech_cells(real))
    delete, factual = ([OutputConstraint.from_json(r["constraint"]) for r in s.pending] for s in slices)
    assert delete[0] == answer_constraint(_query("delete_pos_ppi_r250"))
    assert factual[1] == answer_constraint(_query("factuals_pos_r1k", 1), mode="ANONYMIZED_DISEASE")
    assert factual[1] is not None and factual[1].choices is not None
    assert factual[1].choices[0].endswith("| treats | Disease: new disease")
