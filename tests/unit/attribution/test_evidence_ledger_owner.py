"""A cell's evidence ledger is its testbed corpus's, asked of the one place that builds testbed corpora
(`biorab.ral.parts.testbeds.testbed_corpus`), not rebuilt with a loader of its own (issue 42, item 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import biorab.corpora
from biorab.attribution.evidence import cell_evidence
from biorab.corpora import build_corpus
from biorab.experiment import RetrievalSpec
from biorab.ral.parts import testbeds
from biorab.ral.specs.cell_records import CellPlan


def test_the_evidence_ledger_is_the_testbed_corpus_ledger_built_once(data_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    testbeds.forget_testbeds()
    retrieval = RetrievalSpec(testbed="counterfactual", rate=0.5, retriever="bm25")
    plan = CellPlan("c", "c", "classification", 3, "robust", None, dataset="ade_corpus_v2", split="test",
                    retrieval=retrieval, data_dir=str(data_dir))
    # A second computation: the corpus built directly, from the data folder.
    expected = build_corpus("counterfactual", "ade_corpus_v2", rate=0.5, seed=3, data_dir=data_dir)[1].by_id()
    assert len(expected) > 0
    _, ledger = testbeds.testbed_corpus("counterfactual", "ade_corpus_v2", rate=0.5, seed=3,
                                        data_dir=str(data_dir))
    built: list[Any] = []
    real = biorab.corpora.build_corpus

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(biorab.corpora, "build_corpus", counting)
    evidence = cell_evidence(plan)
    assert evidence.ledger == expected == ledger.by_id()
    assert built == []  # the run's corpus, already built in this process, is not built again
    testbeds.forget_testbeds()
