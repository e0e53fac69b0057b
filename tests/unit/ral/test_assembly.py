"""`biorab.ral.assemble`: a setting's parts, resolved but unbuilt, built where they are used."""

from __future__ import annotations

import pickle
from pathlib import Path

from biorab.cells import CellPlan
from biorab.experiment import RetrievalSpec
from biorab.ral import IndexMemo, assemble, assemble_cells


def test_parts_resolve_the_setting_and_build_the_template_on_first_use(data_dir: Path) -> None:
    parts = assemble(dataset="medmcqa", retrieval=RetrievalSpec(testbed="negative_awareness", k=2),
                     data_dir=data_dir)
    assert parts.labels == ("(A)", "(B)", "(C)", "(D)") and parts.probe and parts.data_dir == str(data_dir)
    assert "template" not in parts.__dict__
    template = parts.template
    assert parts.template is template and template.task == "qa"
    custom = assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="none"), labels=["yes", "no"])
    assert custom.labels == ("yes", "no") and custom.template.labels == ("yes", "no")
    assert custom.retriever() is None  # testbed none: zero-shot


def test_parts_travel_unbuilt(data_dir: Path) -> None:
    parts = assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="labeled"), data_dir=data_dir)
    _ = parts.template
    shipped = pickle.loads(pickle.dumps(parts))
    assert shipped == parts and "template" not in shipped.__dict__
    assert shipped.template == parts.template and shipped.template.dataset == "ade_corpus_v2"


def test_one_index_per_corpus_whatever_the_selection(data_dir: Path) -> None:
    """Two cells of one testbed corpus that differ in k and ties share one index in a process; the hit
    keys still differ by selection."""
    memo: IndexMemo = {}
    a = assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="labeled", k=1), data_dir=data_dir)
    b = assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="labeled", k=3, keep_ties=False),
                 data_dir=data_dir)
    ra, rb = a.retriever(indexes=memo), b.retriever(indexes=memo)
    assert ra is not None and rb is not None and len(memo) == 1
    assert ra.retriever is rb.retriever and ra.corpus_digest == rb.corpus_digest
    assert ra.key("aspirin") != rb.key("aspirin")
    from biorab.corpora import build_corpus

    corpus, _ = build_corpus("labeled", "ade_corpus_v2", seed=0, data_dir=data_dir)
    query = corpus.items[0].key
    assert ra.search({"q": query})["q"].hits[0].key == query
    assert len(rb.search({"q": query})["q"].hits) == 3


def test_a_run_assembles_the_cells_it_renders_or_retrieves() -> None:
    zero = CellPlan(cell_id="c0", label="ade zero", task="classification", seed=0, parser="robust",
                    labels=("1", "0"), dataset="ade_corpus_v2", split="test",
                    retrieval=RetrievalSpec(testbed="none"))
    own_prompts = CellPlan(cell_id="c1", label="drugmech", task="drugmech", seed=3, parser="robust",
                           labels=None, renders=False, parses=False, source="drugmech")
    retrieving = CellPlan(cell_id="c2", label="qa bm25", task="qa", seed=7, parser="strict", labels=None,
                          dataset="medmcqa", split="test", retrieval=RetrievalSpec(testbed="labeled"),
                          data_dir="/data", corpus_dir="/methods/x")
    parts = assemble_cells({p.cell_id: p for p in (zero, own_prompts, retrieving)})
    assert sorted(parts) == ["c0", "c2"]
    assert (parts["c2"].seed, parts["c2"].parser, parts["c2"].data_dir, parts["c2"].corpus_dir) == (
        7, "strict", "/data", "/methods/x")
    assert parts["c0"].retrieval.testbed == "none" and parts["c0"].label_space is None
