"""`biorab run` with the negative-awareness probe (Testbed 4), in-process with the fake backend: exact rates,
probe columns in the rows, resume and retry of a failed probe, and de-duplication as a retrieval option."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.generation.fake import FakeBackend
from biorab.ral import probe_prompt_id
from biorab.runner import run_experiment
from biorab.runner.executors.local import LocalExecutor
from biorab.runner.store.shards import read_all_rows
from biorab.tasks import AWARENESS_MAX_TOKENS
from tests.support.awareness_runs import COUNTS, PROBES, N, answers, make_config, na_config


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))








def test_probe_rates_are_exact(tmp_path: Path, data_dir: Path) -> None:
    result = run_experiment(na_config(tmp_path, data_dir))
    (cell,) = result.cells
    assert cell.metrics["accuracy"]["value"] == pytest.approx(4 / 6)
    assert cell.metrics["true_negative_awareness_rate"]["value"] == pytest.approx(1 / 2)
    assert cell.metrics["false_negative_awareness_rate"]["value"] == pytest.approx(3 / 4)
    ci = cell.metrics["false_negative_awareness_rate"]
    assert ci["ci_low"] is not None and ci["ci_low"] <= 0.75 <= ci["ci_high"]
    assert cell.extra["awareness_counts"] == COUNTS
    assert result.stats.generated == N and result.stats.probe_generated == N

    rows = pq.read_table(cell.predictions_path).to_pylist()
    judgements = {r["id"]: r["probe_judgement"] for r in rows}
    assert judgements == {**{i: a for i, a in PROBES.items() if a in ("True", "False")},
                          "ade_corpus_v2/test/1": "True", "ade_corpus_v2/test/4": None}
    for row in rows:  # the probe shows the top retrieved (counterfactual) example and the input
        top = json.loads(row["hits"])[0]
        assert top["key"] in row["probe_prompt"] and row["text"] in row["probe_prompt"]
        assert "If it is negative, please output False" in row["probe_prompt"]
        assert row["probe_gen_error"] is None and row["probe_gen_cached"] is False

    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["cells"][0]["awareness_counts"] == COUNTS
    report = result.report_path.read_text()
    assert "| true_negative_awareness_rate | 0.500 [" in report
    assert "| false_negative_awareness_rate | 0.750 [" in report
    from biorab.metrics.definitions import AWARENESS_CONVENTION

    assert report.count(AWARENESS_CONVENTION) == 1  # the answer convention, stated where the rates are


def test_probe_uses_the_awareness_token_budget(tmp_path: Path, data_dir: Path) -> None:
    long_answer = " ".join(["True"] + ["x"] * 30)
    backend = FakeBackend(FakeBackend.Params(mode="fixed", answer=long_answer))
    result = run_experiment(na_config(tmp_path, data_dir), executor=LocalExecutor(backend))
    rows = pq.read_table(result.cells[0].predictions_path).to_pylist()
    assert {len(r["probe_gen_text"].split()) for r in rows} == {AWARENESS_MAX_TOKENS}
    assert {len(r["gen_text"].split()) for r in rows} == {16}


def test_resume_and_failed_probe_retry(tmp_path: Path, data_dir: Path) -> None:
    cfg = na_config(tmp_path, data_dir)
    params = {"mode": "map", "answers": answers(data_dir)}
    failing = probe_prompt_id("ade_corpus_v2/test/3")
    broken = FakeBackend(FakeBackend.Params(**params, fail_ids=(failing,)))
    first = run_experiment(cfg, executor=LocalExecutor(broken))
    assert first.stats.generation_failures == 1 and first.cells[0].generation_failures == 1
    # The failed probe counts as unaware: f drops to 2 (id 3 was "False" anyway: not in f), unparsed +1.
    assert first.cells[0].extra["awareness_counts"]["unparsed"] == 2
    shard_rows = read_all_rows(tmp_path / "runs/aware/cells" / first.cells[0].plan.cell_id)
    assert [r["id"] for r in shard_rows if r["probe_gen_error"]] == ["ade_corpus_v2/test/3"]

    healthy = FakeBackend(FakeBackend.Params(**params))
    second = run_experiment(cfg, executor=LocalExecutor(healthy))
    assert second.total_pending == 1  # only the row whose probe failed
    # (the fake's model digest includes fail_ids, so the healthy backend regenerates the task answer too)
    assert second.stats.generated == 1 and second.stats.probe_generated == 1
    assert second.cells[0].extra["awareness_counts"] == COUNTS
    third = run_experiment(cfg, executor=LocalExecutor(healthy))
    assert third.total_pending == 0
    fresh = run_experiment(cfg, executor=LocalExecutor(healthy), resume=False)
    assert (fresh.stats.generated, fresh.stats.probe_generated, fresh.stats.probe_cache_hits) == (5, 5, 1)
    again = run_experiment(cfg, executor=LocalExecutor(healthy), resume=False)
    assert again.stats.generated == 0 and again.stats.probe_generated == 0
    assert again.stats.probe_cache_hits == N and again.stats.generation_cache_hits == N
    assert again.cells[0].metrics == second.cells[0].metrics


def test_probe_off_by_default_elsewhere_and_on_request(tmp_path: Path, data_dir: Path) -> None:
    cfg = make_config(tmp_path, data_dir, [
        {"testbed": "labeled", "retriever": "bm25"},
        {"testbed": "labeled", "retriever": "bm25", "awareness_probe": True, "probe_any_testbed": True},
        {"testbed": "negative_awareness", "retriever": "bm25", "awareness_probe": False},
    ])
    result = run_experiment(cfg)
    plain, probed, na_off = result.cells
    assert "true_negative_awareness_rate" not in plain.metrics
    assert "true_negative_awareness_rate" not in na_off.metrics
    assert set(probed.metrics) >= {"true_negative_awareness_rate", "false_negative_awareness_rate"}
    assert probed.extra["awareness_counts"]["l_t"] == 2
    rows = pq.read_table(plain.predictions_path).to_pylist()
    assert all(r["probe_prompt"] is None and r["probe_judgement"] is None for r in rows)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_dedupe_false_keeps_duplicate_examples(tmp_path: Path, data_dir: Path) -> None:
    # ade_corpus_v2 train repeats sentences; with k=3 some instance retrieves an identical (key, value) twice.
    cfg = make_config(tmp_path, data_dir, [
        {"testbed": "labeled", "retriever": "bm25", "k": 3, "keep_ties": False},
        {"testbed": "labeled", "retriever": "bm25", "k": 3, "keep_ties": False, "dedupe": False},
    ])
    deduped, kept = run_experiment(cfg.with_limit(40)).cells
    assert kept.plan.label.endswith("-k3-dups")

    def pairs(path: Path) -> list[list[tuple[str, str]]]:
        return [[(h["key"], h["value"]) for h in json.loads(r["hits"])]
                for r in pq.read_table(path).to_pylist()]

    with_dups, without = pairs(kept.predictions_path), pairs(deduped.predictions_path)
    assert all(len(set(p)) == len(p) for p in without)
    assert all(len(p) == 3 for p in with_dups)
    assert any(len(set(p)) < len(p) for p in with_dups)


@pytest.mark.slow
def test_rates_are_logged_to_mlflow(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the run dir's own store
    cfg = na_config(tmp_path, data_dir)
    cfg = cfg.model_copy(update={"tracking": cfg.tracking.model_copy(update={"enabled": True})})
    result = run_experiment(cfg)

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=result.tracking_uri)
    experiment = client.get_experiment_by_name("aware")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id])
    (run,) = [r for r in runs if "mlflow.parentRunId" in r.data.tags]  # the one cell, under its parent
    metrics = run.data.metrics
    assert metrics["true_negative_awareness_rate"] == pytest.approx(1 / 2)
    assert metrics["false_negative_awareness_rate"] == pytest.approx(3 / 4)
    name = "false_negative_awareness_rate"
    assert metrics[f"ci_low/{name}"] <= 3 / 4 <= metrics[f"ci_high/{name}"]
    assert run.data.params["testbed"] == "negative_awareness" and run.data.params["awareness_probe"] == "True"
