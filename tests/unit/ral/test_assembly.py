"""`biorab.ral.assemble`: a setting's parts, resolved but unbuilt, built where they are used."""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from biorab.common.errors import ConfigError
from biorab.experiment import BackendSpec
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.methods.store import read_transformed
from biorab.ral import IndexMemo, MethodCorpora, RetrievalSpec, assemble, assemble_cells
from biorab.ral.parts.testbeds import forget_testbeds
from biorab.ral.specs.cell_records import CellPlan


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
                          data_dir="/data")
    parts = assemble_cells({p.cell_id: p for p in (zero, own_prompts, retrieving)})
    assert sorted(parts) == ["c0", "c2"]
    assert (parts["c2"].seed, parts["c2"].parser, parts["c2"].data_dir, parts["c2"].corpus_dir) == (
        7, "strict", "/data", None)
    assert parts["c0"].retrieval.testbed == "none" and parts["c0"].label_space is None


def test_the_core_owns_the_retrieval_spec() -> None:
    import biorab.experiment
    from biorab.ral.parts.assembly import RALParts

    assert biorab.experiment.RetrievalSpec is RetrievalSpec
    assert RALParts.__annotations__["retrieval"] == "RetrievalSpec"
    field = biorab.experiment.ExperimentConfig.model_fields["retrieval"]
    assert field.annotation == tuple[RetrievalSpec, ...]


def test_each_testbed_corpus_is_built_once_per_process(data_dir: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import biorab.corpora

    real, built = biorab.corpora.build_corpus, []

    def counting(*args: Any, **kwargs: Any) -> Any:
        built.append((args, kwargs["data_dir"]))
        return real(*args, **kwargs)

    monkeypatch.setattr(biorab.corpora, "build_corpus", counting)
    forget_testbeds()
    parts = assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="labeled"), data_dir=data_dir)
    corpus, _ledger = parts.testbed()
    retriever = parts.retriever()
    other_k = assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="labeled", k=3),
                       data_dir=data_dir)
    assert retriever is not None and retriever.corpus_digest == corpus.digest
    assert other_k.testbed()[0] is corpus and other_k.retriever() is not None
    assert built == [(("labeled", "ade_corpus_v2"), str(data_dir))]
    # Another data folder is another corpus.
    copy = tmp_path / "copy"
    shutil.copytree(data_dir, copy)
    assemble(dataset="ade_corpus_v2", retrieval=RetrievalSpec(testbed="labeled"), data_dir=copy).testbed()
    assert [d for _args, d in built] == [str(data_dir), str(copy)]


@dataclass(frozen=True)
class Declared:
    backend: BackendSpec
    sampling: SamplingParams


class RefusingBackend(FakeBackend):
    def generate(self, prompts: Any, params: Any) -> Any:
        raise AssertionError("a stored method corpus was transformed again")


def test_a_method_corpus_is_prepared_by_the_assembly_once_and_reused(data_dir: Path, tmp_path: Path) -> None:
    params = {"answer": "incorrect: 1"}  # every item flagged and relabelled 1: the corpus changes
    declared = Declared(BackendSpec(name="fake", params=params), SamplingParams(max_tokens=8))
    entry = RetrievalSpec(testbed="counterfactual", rate=0.8, method="detect_correct")
    backend = FakeBackend(FakeBackend.Params(**params))
    with MethodCorpora(declared, tmp_path / "cache", backend=backend) as methods:
        parts = assemble(dataset="ade_corpus_v2", retrieval=entry, data_dir=data_dir, methods=methods)
        prompts = backend.prompts_seen
        again = assemble(dataset="ade_corpus_v2", retrieval=entry.model_copy(update={"k": 3}),
                         data_dir=data_dir, methods=methods)
    source, _ledger = parts.testbed()
    assert prompts == len({(i.key, i.value) for i in source.items}) > 0  # every review prompt once
    assert backend.prompts_seen == prompts and again.corpus_dir == parts.corpus_dir is not None
    transformed, _truth, ledger, info = read_transformed(parts.corpus_dir)
    assert info["source_digest"] == source.digest and ledger.method == "detect_correct"
    retriever = parts.retriever()
    assert retriever is not None and retriever.corpus_digest == transformed.digest != source.digest
    # A later caller with the same blocks reads the stored corpus: nothing is generated again.
    with MethodCorpora(declared, tmp_path / "cache", backend=RefusingBackend()) as later:
        reread = assemble(dataset="ade_corpus_v2", retrieval=entry, data_dir=data_dir, methods=later)
    assert reread.corpus_dir == parts.corpus_dir
    # Without a prepared corpus (and no generator to transform it live) the retriever refuses.
    bare = assemble(dataset="ade_corpus_v2", retrieval=entry, data_dir=data_dir)
    with pytest.raises(ConfigError, match="needs its transformed corpus prepared"):
        bare.retriever()
