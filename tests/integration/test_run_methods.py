"""A run with ``method: none`` and ``method: detect_correct`` cells on counterfactual 80%: the transformed
corpus is what the detect_correct cell retrieves from, the cell reports the method's scores against the
true ledger, and a rerun computes nothing new (transform and RAL, all from the caches)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.corpora import build_corpus
from biorab.experiment import ExperimentConfig
from biorab.generation.fake import FakeBackend
from biorab.runner import run_experiment
from biorab.runner.executors.local import LocalExecutor
from tests.support.method_runs import N, answers

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def config(tmp_path: Path, data_dir: Path, params: dict[str, object]) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": "dc", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}],
        "retrieval": [{"testbed": "counterfactual", "rate": 0.8, "retriever": "bm25"},
                      {"testbed": "counterfactual", "rate": 0.8, "retriever": "bm25",
                       "method": "detect_correct"},
                      {"testbed": "labeled", "retriever": "bm25"}],
        "backend": {"name": "fake", "params": params},
        "sampling": {"max_tokens": 8}, "n_boot": 50, "tracking": {"enabled": False},
    })


def hit_values(cell: object) -> list[list[str]]:
    rows = pq.read_table(cell.predictions_path).to_pylist()  # type: ignore[attr-defined]
    return [[h["value"] for h in json.loads(r["hits"])] for r in rows]


def test_detect_correct_cell_and_cached_rerun(tmp_path: Path, data_dir: Path) -> None:
    params = {"mode": "map", "answers": answers(data_dir), "answer": "correct"}
    cfg = config(tmp_path, data_dir, params)
    backend = FakeBackend(FakeBackend.Params(**params))
    result = run_experiment(cfg, executor=LocalExecutor(backend))
    # Every distinct review prompt once (items with the same sentence and value share one generation: the
    # cache is keyed by prompt text), then the RAL prompts: the detect_correct cell's are the labeled
    # cell's (same corpus, same hits), so they are generated once.
    source, _ = build_corpus("counterfactual", "ade_corpus_v2", rate=0.8, seed=0, data_dir=data_dir)
    assert len({(i.key, i.value) for i in source.items}) == 3896
    assert backend.prompts_seen == 3896 + 2 * N
    plain, method, labeled = result.cells
    assert method.plan.label == "ade_corpus_v2-test__counterfactual-0.8-bm25-k1-detect_correct"
    assert plain.plan.cell_id.endswith("__" + cfg.cells()[0].fingerprint)
    m = {k: v["value"] for k, v in method.metrics.items()}
    assert (m["detection_precision"], m["detection_recall"], m["detection_f1"]) == (1.0, 1.0, 1.0)
    assert m["correction_accuracy"] == 1.0 and m["corpus_accuracy_after"] == 1.0
    assert m["corpus_accuracy_before"] == pytest.approx(0.2)  # 800 of 4000 items kept their gold label
    assert "detection_precision" not in plain.metrics
    block = method.extra["method"]
    assert block["counts"] == {"items": 4000, "flagged": 3200, "changed": 3200, "unreadable": 0}
    # Perfectly corrected, the corpus is the labeled testbed byte for byte: same digest, same hits.
    labeled_corpus, _ = build_corpus("labeled", "ade_corpus_v2", seed=0, data_dir=data_dir)
    assert block["corpus_digest"] == labeled_corpus.digest
    assert hit_values(method) == hit_values(labeled) != hit_values(plain)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["cells"][1]["method"]["name"] == "detect_correct"

    again = FakeBackend(FakeBackend.Params(**params))
    rerun = run_experiment(cfg, executor=LocalExecutor(again), resume=False)
    assert again.prompts_seen == 0 and rerun.stats.generated == 0
    assert rerun.stats.generation_cache_hits == 3 * N and rerun.stats.retrieval_cache_hits == 3 * N
    assert [c.metrics for c in rerun.cells] == [c.metrics for c in result.cells]
    resumed = run_experiment(cfg, executor=LocalExecutor(again))
    assert resumed.total_pending == 0 and again.prompts_seen == 0


def test_build_ral_applies_the_method(data_dir: Path) -> None:
    from biorab.experiment import RetrievalSpec
    from biorab.generation.base import SamplingParams
    from biorab.ral import build_ral

    backend = FakeBackend(FakeBackend.Params(mode="map", answers=answers(data_dir), answer="correct"))
    spec = RetrievalSpec(testbed="counterfactual", rate=0.8, method="detect_correct")
    ral = build_ral(dataset="ade_corpus_v2", retrieval=spec, backend=backend, sampling=SamplingParams(),
                    data_dir=str(data_dir))
    labeled, _ = build_corpus("labeled", "ade_corpus_v2", seed=0, data_dir=data_dir)
    assert ral.retriever is not None and ral.retriever.corpus_digest == labeled.digest
    plain = build_ral(dataset="ade_corpus_v2", retrieval=spec.model_copy(update={"method": "none"}),
                      backend=backend, sampling=SamplingParams(), data_dir=str(data_dir))
    assert plain.retriever is not None and plain.retriever.corpus_digest != labeled.digest
