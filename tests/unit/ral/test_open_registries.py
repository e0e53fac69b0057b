"""The retrieval setting's names are checked against the registries, not against lists of their own: a
testbed, corpus method or retriever a plug-in registers is accepted with no edit in the core, the CLI or the
sweep; each plug-in declares its own facts (a corpus method's testbeds, a retriever's fingerprint cost and
encoder flags) on its registry entry (issue 42, item 3)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from biorab.cli.retrieve import _engine_params
from biorab.common.errors import ConfigError
from biorab.common.registry import CORPORA, CORPUS_METHODS, RETRIEVERS
from biorab.ral.specs.retrieval_spec import RetrievalSpec

# The paper's testbeds (and ``none``), written out by hand in sorted order (docs/retrieval.md).
PAPER_TESTBEDS = ("counterfactual", "counterfactual_far", "counterfactual_near", "diverse", "labeled",
                  "negative_awareness", "none", "unlabeled")


def _error(**fields: Any) -> tuple[tuple[Any, ...], str]:
    with pytest.raises(ValidationError) as caught:
        RetrievalSpec(**fields)
    (first,) = caught.value.errors()
    return first["loc"], first["msg"]


def test_an_unknown_testbed_or_method_names_the_field_and_the_known_names() -> None:
    assert _error(testbed="labled") == (
        ("testbed",),
        "Value error, unknown testbed 'labled'. Did you mean 'labeled', 'unlabeled'? Known testbeds: "
        + ", ".join(PAPER_TESTBEDS))
    assert _error(testbed="labeled", method="detect") == (
        ("method",),
        "Value error, unknown corpus method 'detect'. Did you mean 'detect_correct'? Known corpus methods: "
        "detect_correct, llm_label, none")


def test_a_corpus_method_applies_to_the_testbeds_its_plug_in_declares() -> None:
    assert RetrievalSpec(testbed="unlabeled", method="llm_label").method == "llm_label"
    assert _error(testbed="unlabeled", method="detect_correct")[1] == (
        "Value error, method detect_correct applies to the labeled, counterfactual, negative_awareness "
        "testbed(s), not 'unlabeled'")


class _PlantedMethod:
    def testbeds(self, method: str) -> tuple[str, ...]:
        return ("planted_bed",)


def test_a_testbed_and_a_method_registered_by_a_plug_in_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValidationError, match="unknown testbed 'planted_bed'"):
        RetrievalSpec(testbed="planted_bed")
    monkeypatch.setitem(CORPORA._objects, "planted_bed", object())
    monkeypatch.setitem(CORPUS_METHODS._objects, "planted_method", _PlantedMethod())
    assert RetrievalSpec(testbed="planted_bed", method="planted_method").testbed == "planted_bed"
    # The plug-in's own testbeds decide, not a list in the core.
    assert _error(testbed="labeled", method="planted_method")[1] == (
        "Value error, method planted_method applies to the planted_bed testbed(s), not 'labeled'")


def test_each_retriever_declares_its_fingerprint_cost() -> None:
    # BM25 needs no model to state its fingerprint; dense needs its encoder, hybrid its parts.
    declared = {name: RETRIEVERS.attribute_of(name, "cheap_fingerprint")
                for name in ("bm25", "dense", "hybrid")}
    assert declared == {"bm25": True, "dense": False, "hybrid": False}


class _PlantedEncoderRetriever:
    cheap_fingerprint: ClassVar[bool] = False

    @classmethod
    def encoder_params(cls, encoder: str | None, model: str | None) -> dict[str, Any] | None:
        return {"planted_encoder": encoder}


def test_the_encoder_flags_mean_what_each_retriever_declares(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _engine_params("bm25", None, None) == {}
    assert _engine_params("dense", None, None) == {"encoder": "minilm"}
    assert _engine_params("hybrid", "medcpt", "/m") == {
        "second": {"name": "dense", "params": {"encoder": "medcpt", "model": "/m"}}}
    with pytest.raises(ConfigError, match="--model applies to the dense and hybrid retrievers only"):
        _engine_params("bm25", None, "/m")
    monkeypatch.setitem(RETRIEVERS._objects, "planted", _PlantedEncoderRetriever)
    assert _engine_params("planted", "x", None) == {"planted_encoder": "x"}
    with pytest.raises(ConfigError, match="--encoder applies to the dense and hybrid and planted retrievers"):
        _engine_params("bm25", "x", None)
