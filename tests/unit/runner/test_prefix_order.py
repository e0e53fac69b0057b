"""`order_by_prefix`: rows of one instruction sorted by their retrieved examples; nothing else moves."""

from __future__ import annotations

import json

from biorab.experiment import RetrievalSpec
from biorab.ral.specs.cell_records import CellPlan
from biorab.runner.executors.prefix_order import order_by_prefix


def plan(cell_id: str, dataset: str, template: str, testbed: str) -> CellPlan:
    rate = 1.0 if testbed == "counterfactual" else None
    return CellPlan(cell_id=cell_id, label=cell_id, dataset=dataset, split="test", task="classification",
                    retrieval=RetrievalSpec(testbed=testbed, rate=rate, template=template),
                    seed=0, data_dir=None, parser="robust", labels=None)


def row(cell_id: str, i: int, *examples: tuple[str, str]) -> dict:
    hits = [{"doc_id": f"d{k}", "score": 1.0, "rank": r, "key": k, "value": v, "dataset": ""}
            for r, (k, v) in enumerate(examples)]
    return {"cell_id": cell_id, "order": i, "hits": json.dumps(hits)}


def test_rows_grouped_by_instruction_then_retrieved_examples() -> None:
    plans = {"zero": plan("zero", "ade", "noexample", "none"), "lab": plan("lab", "ade", "bm25", "labeled"),
             "cf": plan("cf", "ade", "bm25", "counterfactual"),
             "qa": plan("qa", "medmcqa", "bm25", "labeled")}
    rows = [row("zero", 0), row("zero", 1),
            row("lab", 0, ("b", "1")), row("lab", 1, ("a", "0")), row("lab", 2, ("b", "1"), ("c", "0")),
            row("cf", 0, ("b", "0")), row("cf", 1, ("a", "1")),
            row("qa", 0, ("z", "A")), row("qa", 1, ("y", "B"))]
    got = [(r["cell_id"], r["order"]) for r in order_by_prefix(rows, plans)]
    assert got == [("zero", 0), ("zero", 1),  # zero-shot rows keep their order
                   ("lab", 1), ("cf", 1),  # example "a" (value 0, then 1), across the two corpora
                   ("cf", 0), ("lab", 0), ("lab", 2),  # example "b": "b"=0, "b"=1, then "b"=1 + "c"
                   ("qa", 1), ("qa", 0)]  # the next instruction (another dataset) after the first
    assert sorted(map(id, order_by_prefix(rows, plans))) == sorted(map(id, rows))  # the same row objects
