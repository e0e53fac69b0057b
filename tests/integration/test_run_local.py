"""`run_experiment` in-process with the fake backend: exact outputs, resume, no regeneration, shared work,
failed generations recorded, counted and retried."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig
from biorab.generation.fake import FakeBackend
from biorab.runner import run_experiment
from biorab.runner.executors.local import LocalExecutor
from biorab.runner.store.shards import read_all_rows
from tests.support.local_runs import N_ADE, N_QA, answers, make_config


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache per test, so that cache-hit counts do not depend on other tests."""
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))








def accuracy(result: object, label: str) -> float:
    cell = next(c for c in result.cells if c.plan.label == label)  # type: ignore[attr-defined]
    return cell.metrics["accuracy"]["value"]


def test_exact_outputs_and_metrics(tmp_path: Path, data_dir: Path) -> None:
    result = run_experiment(make_config(tmp_path, data_dir))
    assert result.total_pending == 2 * (N_ADE + N_QA)
    assert result.stats.generated == 2 * (N_ADE + N_QA) and result.stats.generation_failures == 0
    assert accuracy(result, "ade_corpus_v2-test__none") == pytest.approx(5 / 6)
    assert accuracy(result, "ade_corpus_v2-test__labeled-bm25-k1") == pytest.approx(5 / 6)
    assert accuracy(result, "medmcqa-test__none") == pytest.approx(4 / 5)
    cell = next(c for c in result.cells if c.plan.label == "medmcqa-test__labeled-bm25-k1")
    rows = pq.read_table(cell.predictions_path).to_pylist()
    assert [r["id"] for r in rows] == [f"medmcqa/test/{i}" for i in range(N_QA)]
    assert [r["pred_label"] for r in rows] == [answers(data_dir)[r["id"]] for r in rows]
    for row in rows:  # one retrieved training example, pasted into the prompt
        hits = json.loads(row["hits"])
        assert len(hits) >= 1 and hits[0]["doc_id"].startswith("medmcqa/train/")
        assert hits[0]["key"].split("\n")[0][:40] in row["prompt"]
    none_rows = pq.read_table(result.cells[0].predictions_path).to_pylist()
    assert all(json.loads(r["hits"]) == [] for r in none_rows)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert [c["n"] for c in summary["cells"]] == [N_ADE, N_ADE, N_QA, N_QA]
    report = result.report_path.read_text()
    assert "| ade_corpus_v2-test__none | classification | 6 | accuracy | 0.833" in report
    # micro-F1 equals accuracy on a single-label task: shown as such, the identity stated once
    assert "| ade_corpus_v2-test__none | classification | 6 | accuracy (micro_f1) | 0.833" in report
    assert report.count("micro-averaged precision, recall and F1 equal accuracy") == 1
    assert "negative-awareness" not in report.lower()  # no rates, no convention
    assert summary["cells"][0]["metrics"]["micro_f1"]["value"] == pytest.approx(5 / 6)  # keys unchanged


def test_second_run_generates_nothing(tmp_path: Path, data_dir: Path) -> None:
    cfg = make_config(tmp_path, data_dir)
    first = run_experiment(cfg)
    resumed = run_experiment(cfg)
    assert resumed.total_pending == 0 and resumed.stats.generated == 0
    fresh = run_experiment(cfg, resume=False)
    assert fresh.total_pending == 22 and fresh.stats.generated == 0
    assert fresh.stats.generation_cache_hits == 22 and fresh.stats.retrieval_cache_hits == N_ADE + N_QA
    assert [c.metrics for c in fresh.cells] == [c.metrics for c in first.cells]
    bigger = run_experiment(cfg.with_limit(7))  # a larger slice computes only the new rows
    assert bigger.total_pending == 6 and bigger.stats.generated == 6  # 1 + 1 + 2 + 2


def test_two_runs_share_work(tmp_path: Path, data_dir: Path) -> None:
    run_experiment(make_config(tmp_path, data_dir, name="a", retrieval=[{"testbed": "none"}]))
    other = make_config(tmp_path, data_dir, name="b",
                        retrieval=[{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25"}])
    result = run_experiment(other)
    assert result.total_pending == 22
    assert result.stats.generation_cache_hits == N_ADE + N_QA  # the no-retrieval prompts of run "a"
    assert result.stats.generated == N_ADE + N_QA


def test_failed_generations_are_recorded_counted_and_retried(tmp_path: Path, data_dir: Path) -> None:
    cfg = make_config(tmp_path, data_dir, retrieval=[{"testbed": "none"}])
    params = {"mode": "map", "answers": answers(data_dir)}
    broken = FakeBackend(FakeBackend.Params(**params, fail_ids=("medmcqa/test/0", "medmcqa/test/3")))
    first = run_experiment(cfg, executor=LocalExecutor(broken))
    assert first.stats.generation_failures == 2
    qa = first.cells[1]
    assert qa.generation_failures == 2 and qa.n == N_QA
    assert qa.metrics["accuracy"]["value"] == pytest.approx(2 / 5)  # failed rows count as wrong
    errors = {r["id"]: r["gen_error"] for r in read_all_rows(tmp_path / "runs/local/cells" / qa.plan.cell_id)}
    assert errors["medmcqa/test/0"].startswith("fake backend: injected fault")
    healthy = FakeBackend(FakeBackend.Params(**params))
    second = run_experiment(cfg, executor=LocalExecutor(healthy))
    assert second.total_pending == 2 and healthy.prompts_seen == 2
    assert second.cells[1].generation_failures == 0
    assert second.cells[1].metrics["accuracy"]["value"] == pytest.approx(4 / 5)


def test_backend_exception_fails_the_batch_rows_only(tmp_path: Path, data_dir: Path) -> None:
    cfg = make_config(tmp_path, data_dir, retrieval=[{"testbed": "none"}])
    flaky = FakeBackend(FakeBackend.Params(mode="map", answers=answers(data_dir), fail_every=2))
    result = run_experiment(cfg, executor=LocalExecutor(flaky))
    # 11 rows in batches of 4 → calls 1..3; call 2 raised, so its 4 rows failed and the run finished.
    assert result.stats.generation_failures == 4 and result.stats.written == 11
    assert sum(c.generation_failures for c in result.cells) == 4


@pytest.mark.parametrize(("parser", "f1"), [("robust", 1.0), ("strict_original", 0.5)])
def test_strict_original_run_scores_triples_with_the_original_rule(
    tmp_path: Path, data_dir: Path, parser: str, f1: float
) -> None:
    """`5_metrics.py` does not strip the predicted relation: with ``parser: strict_original`` a run scores
    ``h| effect |t`` as wrong, the robust default as right (same rule as `biorab score`)."""
    gold = {ex.id: ex.label for ex in load_dataset("ade", "test", data_dir=data_dir)[:2]}
    head, relation, tail = gold["ade/test/1"].split("|")
    gold["ade/test/1"] = f"{head}| {relation} |{tail}"
    cfg = ExperimentConfig.model_validate({
        "name": f"strict-{parser}",
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade", "limit": 2}],
        "retrieval": [{"testbed": "none"}],
        "backend": {"name": "fake", "params": {"mode": "map", "answers": gold}},
        "parser": parser,
        "n_boot": 0,
        "tracking": {"enabled": False},
    })
    result = run_experiment(cfg)
    assert result.cells[0].metrics["f1"]["value"] == pytest.approx(f1)
