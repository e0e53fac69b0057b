"""`--rehearse`'s substitutions on the real jobs/paper.yaml: every model on the fake engine (distinct
digests, none a real model's), the encoders that cannot load on the packaged MiniLM with the cells of
Contriever and MedCPT kept apart, local resources and MLflow store, its own output root; and the fake
engine's ``constraint`` mode answers every task's constraint."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from biorab.generation.regex_sample import sample_regex
from biorab.sweep import load_sweep
from biorab.sweep.expand import expand_runs
from biorab.sweep.rehearsal import rehearse

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_hf_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub is offline and nothing is cached: Contriever and MedCPT cannot load (as on CI)."""
    from biorab.runner.checks import loadable

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(loadable, "_in_hf_cache", lambda repo_id: False)
    loadable._hub_problem.cache_clear()


def test_paper_grid_rehearsed_keeps_every_cell(tmp_path: Path, no_hf_cache: None) -> None:
    real = load_sweep(REPO / "jobs" / "paper.yaml")
    cfg, subs = rehearse(real, output_dir=tmp_path / "reh")
    real_ids = [c.cell_id for r in expand_runs(real) for c in r.config.cells()]
    runs = expand_runs(cfg)
    ids = [c.cell_id for r in runs for c in r.config.cells()]
    assert len(ids) == len(set(ids)) == len(real_ids) == 325  # two encoders on one stand-in: two cells
    assert {r.config.backend.name for r in runs} == {"fake"}
    models = {r.model: r.config.backend.params["name"] for r in runs}
    assert models == {m: f"rehearsal:{m}" for m in ("llama2-13b", "medllama-13b", "llama3-8b", "phi4-14b",
                                                   "qwen2.5-32b")}
    dense = [r.retriever_params for run in runs for r in run.config.retrieval if r.retriever == "dense"]
    assert {p["stand_in_for"] for p in dense} == {"contriever", "medcpt"}
    assert {p["encoder"] for p in dense} == {"minilm"}
    for run in runs:
        res = run.config.resources
        assert res.address is None and res.llm.num_gpus == 0 and res.llm.pool_size == 1
        assert res.llm.batch_size == 64  # the sweep's batch size kept
        assert run.config.tracking.uri == f"sqlite:///{(tmp_path / 'reh').resolve() / 'paper' / 'mlflow.db'}"
    assert cfg.sweep_dir() == (tmp_path / "reh").resolve() / "paper"
    lines = [s.line() for s in subs]
    assert "replaced encoder medcpt: medcpt -> minilm (packaged)" in lines
    assert "replaced model qwen2.5-32b: vllm Qwen/Qwen2.5-32B-Instruct -> fake (constraint)" in lines


def test_stand_in_changes_no_hit_fingerprint() -> None:
    from biorab.retrieval.base import EXECUTION_ONLY
    from biorab.retrieval.dense import DenseParams, DenseRetriever

    class NoModel(DenseRetriever):  # the fingerprint's params part, without loading the encoder
        def _fingerprint_extra(self) -> dict[str, str]:
            return {}

    plain = NoModel(DenseParams())
    stood = NoModel(DenseParams(stand_in_for="contriever"))
    # the hits and the index are MiniLM's either way: one index, one hit cache for both stand-ins
    assert plain._digest_of(EXECUTION_ONLY) == stood._digest_of(EXECUTION_ONLY)
    assert plain._digest_of(frozenset()) != stood._digest_of(frozenset())  # the param is there


@pytest.mark.parametrize("pattern", [
    r"[^|\n]{1,96}\|(?:effect|dosage)\|[^|\n]{1,96}(?:\n[^|\n]{1,96}\|(?:effect|dosage)\|[^|\n]{1,96})*",
    r"(?:housing|employment)(?:; (?:housing|employment))*",
    r"[A-D]",
])
def test_regex_answers_match_and_are_seeded(pattern: str) -> None:
    drawn = [sample_regex(pattern, random.Random(seed)) for seed in range(20)]
    assert all(re.fullmatch(pattern, text) for text in drawn)
    assert drawn == [sample_regex(pattern, random.Random(seed)) for seed in range(20)]
    assert len(set(drawn)) > 1


def test_constraint_mode_answers_triples_and_choices() -> None:
    from biorab.common.records import OutputConstraint, Prompt
    from biorab.generation.base import SamplingParams
    from biorab.generation.fake import FakeBackend
    from biorab.metrics.triples import parse_triples

    fake = FakeBackend(FakeBackend.Params(mode="constraint"))
    triples = Prompt(example_id="1", text="extract", constraint=OutputConstraint(
        regex=r"[^|\n]{1,96}\|(?:effect)\|[^|\n]{1,96}"))
    choice = Prompt(example_id="2", text="classify", constraint=OutputConstraint(choices=("y", "n")))
    out = fake.generate([triples, choice], SamplingParams(max_tokens=64))
    assert [t[1] for t in parse_triples(out[0].text)] == ["effect"]
    assert out[1].text in ("y", "n")


def test_drugmech_rows_get_their_answer_options_in_rehearsals_only(tmp_path: Path, no_hf_cache: None) -> None:
    """`--rehearse` of a DrugMech sweep and of a DrugMech run config turns `drugmech.answer_constraint` on
    and says so; the real configs keep it off."""
    from biorab.experiment import ExperimentConfig
    from biorab.sweep.rehearsal import rehearse_run

    job = REPO / "jobs" / "drugmech_models.yaml"
    real = load_sweep(job)
    cfg, subs = rehearse(real, output_dir=tmp_path)
    assert {r.config.drugmech.answer_constraint for r in expand_runs(cfg, path=job)
            if r.config.drugmech is not None} == {True}
    assert {r.config.drugmech.answer_constraint for r in expand_runs(real, path=job)
            if r.config.drugmech is not None} == {False}
    line = ("replaced answers drugmech of drugmech-models: free text (no output constraint) -> the answer "
            "options of each prompt kind (output constraint)")
    assert subs[-1].line() == line
    run = ExperimentConfig.model_validate({"name": "r", "drugmech": {"query_files": ["delete_pos_ppi_r250"]},
                                           "backend": {"name": "vllm", "params": {"model": "m"}}})
    rehearsed, run_subs = rehearse_run(run, output_dir=tmp_path)
    assert rehearsed.drugmech is not None and rehearsed.drugmech.answer_constraint
    assert run.drugmech is not None and not run.drugmech.answer_constraint
    assert run_subs[-1].what == "answers"
    # a sweep without DrugMech gets no such substitution
    assert all(s.what != "answers" for s in rehearse(load_sweep(REPO / "jobs" / "paper.yaml"),
                                                     output_dir=tmp_path)[1])
