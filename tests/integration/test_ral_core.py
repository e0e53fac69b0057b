"""The RAL core answers exactly what `biorab run` records for the same config and backend: the same hits,
prompts, generations, predictions and probe judgements (one code path, not two that agree by luck)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.records import Example
from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig, RetrievalSpec
from biorab.generation import build_backend
from biorab.ral import RAL, CachedGenerator, build_ral
from biorab.runner import run_experiment
from biorab.runner.store.shards import read_all_rows

N = 5


def config(tmp_path: Path, data_dir: Path, answers: dict[str, str]) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": "parity", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}, {"name": "medmcqa", "limit": N}],
        "retrieval": [{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25", "k": 1},
                      {"testbed": "negative_awareness", "retriever": "bm25", "k": 1}],
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers}},
        "sampling": {"max_tokens": 8}, "n_boot": 20, "tracking": {"enabled": False},
    })


def slice_of(data_dir: Path) -> list[Example]:
    names = ("ade_corpus_v2", "medmcqa")
    return [ex for name in names for ex in load_dataset(name, "test", data_dir=data_dir)[:N]]


def test_ral_answers_equal_the_rows_biorab_run_writes(tmp_path: Path, data_dir: Path) -> None:
    examples = slice_of(data_dir)
    answers = {ex.id: ex.label for ex in examples} | {"medmcqa/test/0": "(B)", "ade_corpus_v2/test/1": "x"}
    cfg = config(tmp_path, data_dir, answers)
    result = run_experiment(cfg)
    rows = {(r["cell_id"], r["id"]): r for c in result.cells
            for r in read_all_rows(result.run_dir / "cells" / c.plan.cell_id)}
    backend = build_backend(cfg.backend.name, cfg.backend.params)
    compared = probed = 0
    for cell in result.cells:
        spec: RetrievalSpec = cell.plan.retrieval
        ral = build_ral(dataset=cell.plan.dataset, retrieval=spec, backend=backend, sampling=cfg.sampling,
                        parser=cfg.parser, seed=cfg.seed, data_dir=str(data_dir))
        cell_examples = [ex for ex in examples if ex.dataset == cell.plan.dataset]
        for ans in ral.answer(cell_examples):
            row = rows[(cell.plan.cell_id, ans.example_id)]
            assert ans.prompt.text == row["prompt"]
            assert [h.doc_id for h in ans.hits] == [h["doc_id"] for h in json.loads(row["hits"])]
            assert ans.generation.text == row["gen_text"]
            assert ans.result.key == row["gen_key"]
            assert (ans.prediction.label, ans.prediction.ok) == (row["pred_label"], row["pred_ok"])
            if ans.probe is not None:
                assert ans.probe.judgement == row["probe_judgement"]
                assert ans.probe.result.key == row["probe_gen_key"]
                probed += 1
            else:
                assert row["probe_gen_key"] is None
            compared += 1
    assert compared == 3 * 2 * N
    assert probed == 2 * N  # the negative_awareness cells probe every instance (each has a top hit)


def test_ral_without_retriever_renders_zero_shot_and_fails_softly(data_dir: Path) -> None:
    from biorab.generation.base import SamplingParams
    from biorab.tasks import get_template

    ex = load_dataset("medmcqa", "test", data_dir=data_dir)[0]
    backend = build_backend("fake", {"mode": "map", "answers": {ex.id: "(C)"}, "fail_ids": ["none"]})
    ral = RAL(template=get_template("medmcqa"), generator=CachedGenerator(backend), sampling=SamplingParams())
    ans = ral.answer_one(ex)
    assert ans.hits == () and ans.probe is None and not ans.retrieved.cached
    assert (ans.prediction.label, ans.prediction.ok) == ("(C)", True)
    assert ans.generation.text.strip() == "(C)"


@pytest.mark.parametrize("cached", [False, True])
def test_cached_generator_reads_back_what_it_stored(tmp_path: Path, cached: bool) -> None:
    from biorab.caches import GenerationStore
    from biorab.common.records import Prompt
    from biorab.generation.base import SamplingParams

    store = GenerationStore(tmp_path / "g.sqlite")
    gen = CachedGenerator(build_backend("fake", {"mode": "fixed", "answer": "yes"}), store)
    prompts = [Prompt("a", "p1"), Prompt("b", "p2"), Prompt("c", "p1")]
    if cached:
        gen.generate(prompts, SamplingParams())
    results = gen.generate(prompts, SamplingParams())
    # the repeated prompt (c) is generated once in a call: its copy is served like a cached one
    assert [r.cached for r in results] == [cached, cached, True]
    assert results[0].key == results[2].key != results[1].key
    assert [r.generation.text for r in results] == ["yes"] * 3


def test_a_run_assembles_each_cell_once(tmp_path: Path, data_dir: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's stages build their parts from one `assemble` call per cell, not one per stage or batch."""
    import biorab.ral.parts.assembly as assembly

    calls: list[tuple[str, str]] = []
    real = assembly.assemble

    def counted(**kwargs: object) -> assembly.RALParts:
        parts = real(**kwargs)  # type: ignore[arg-type]
        calls.append((parts.dataset, parts.retrieval.testbed))
        return parts

    monkeypatch.setattr(assembly, "assemble", counted)
    spec = config(tmp_path, data_dir, {}).model_dump(mode="json", exclude_unset=True)
    batched = {**spec, "resources": {"llm": {"batch_size": 2}}}
    result = run_experiment(ExperimentConfig.model_validate(batched))
    assert result.stats.written == 3 * 2 * N
    assert sorted(calls) == sorted((d, t) for d in ("ade_corpus_v2", "medmcqa")
                                   for t in ("labeled", "negative_awareness", "none"))
