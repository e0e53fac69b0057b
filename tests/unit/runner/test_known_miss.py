"""`known_miss`: the Ray driver asks the LLM actor to load its model at start only where a row left by
`finish_cached` was looked up in the generation cache (its prompt was known) and missed."""

from __future__ import annotations

from biorab.experiment import RetrievalSpec
from biorab.ral.row_stages.cached_rows import known_miss
from biorab.ral.specs.cell_records import CellPlan


def plan(cell_id: str, testbed: str) -> CellPlan:
    template = "noexample" if testbed == "none" else "bm25"
    return CellPlan(cell_id=cell_id, label=cell_id, dataset="ade", split="test", task="classification",
                    retrieval=RetrievalSpec(testbed=testbed, template=template),
                    seed=0, data_dir=None, parser="robust", labels=None)


PLANS = {"zero": plan("zero", "none"), "bm25": plan("bm25", "labeled")}


def test_only_a_row_whose_prompt_was_looked_up_is_a_sure_miss() -> None:
    zero, bm25 = {"cell_id": "zero", "id": "a"}, {"cell_id": "bm25", "id": "a"}
    assert known_miss([bm25, zero], PLANS, with_hits=False) is True  # a no-retrieval row was not found
    assert known_miss([bm25], PLANS, with_hits=False) is False  # streaming: hits not known, maybe cached
    assert known_miss([bm25], PLANS, with_hits=True) is True  # retrieval ran first: it was looked up
    assert known_miss([], PLANS, with_hits=True) is False
