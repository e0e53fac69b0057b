"""A cell's MLflow child run opens when the cell starts, not when the run starts: a run that dies after its
second batch has children only for the cells that reached generation; the rerun reopens those same runs and
opens the others, one child per cell, all FINISHED (real MLflow on sqlite, read back with `MlflowClient`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from biorab.common.records import Generation, Prompt
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.runner import run_experiment
from biorab.runner.executors.local import LocalExecutor
from tests.support.local_runs import N_ADE, N_QA, make_config


class DiesOnCall(FakeBackend):
    """The fake backend, raising on its `die_on`-th call (as a process would stop mid-run)."""

    def __init__(self, params: FakeBackend.Params, die_on: int) -> None:
        super().__init__(params)
        self.die_on = die_on

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        if self.calls + 1 == self.die_on:
            raise RuntimeError("the process stops here")
        return super().generate(prompts, params)


def children(uri: str) -> dict[str, object]:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("local")
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    return {r.data.tags["cell_id"]: r for r in runs if "mlflow.parentRunId" in r.data.tags}


def test_children_open_when_their_cells_start(tmp_path: Path, data_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cfg = make_config(tmp_path, data_dir)  # ade, medmcqa × none, labeled BM25; batches of 4 rows
    cfg = cfg.model_copy(update={"tracking": cfg.tracking.model_copy(update={"enabled": True})})
    labels = {c.cell_id: c.label for c in cfg.cells()}
    params = FakeBackend.Params(**cfg.backend.params)
    uri = f"sqlite:///{cfg.run_dir() / 'mlflow.db'}"

    # batch 1: ade zero-shot rows 0-3; batch 2 (rows 4-5 and the first 2 BM25 rows) dies in generation
    with pytest.raises(RuntimeError, match="the process stops here"):
        run_experiment(cfg, executor=LocalExecutor(DiesOnCall(params, die_on=2)))
    started = children(uri)
    assert sorted(labels[c] for c in started) == ["ade_corpus_v2-test__labeled-bm25-k1",
                                                  "ade_corpus_v2-test__none"]
    assert {r.info.status for r in started.values()} == {"FAILED"}  # an exception in the work
    zero_shot = next(r for c, r in started.items() if labels[c] == "ade_corpus_v2-test__none")
    assert zero_shot.data.metrics["rows_written"] == 4  # batch 1, logged live on the child

    result = run_experiment(cfg, executor=LocalExecutor(FakeBackend(params)))
    assert result.stats.written == 2 * (N_ADE + N_QA) - 4  # batch 1 was on disk
    final = children(uri)
    assert sorted(labels[c] for c in final) == sorted(labels.values())  # one child per cell
    assert {r.info.status for r in final.values()} == {"FINISHED"}
    assert {c: final[c].info.run_id for c in started} == {c: r.info.run_id for c, r in started.items()}
    assert zero_shot.info.run_id == final[zero_shot.data.tags["cell_id"]].info.run_id
    assert final[zero_shot.data.tags["cell_id"]].data.metrics["n"] == N_ADE
