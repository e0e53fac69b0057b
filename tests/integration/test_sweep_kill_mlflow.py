"""A fake-backend sweep: SIGKILLed mid-run, resumed, run a third time. MLflow then holds exactly one parent
and one child per cell, all FINISHED (read back with `MlflowClient`); a child opens when its cell starts,
so the killed sweep has children only for the cells it reached; the plan of the same grid finds 0 new
generations; `biorab report` writes the tables and plots, with the Detect-and-Correct cell's scores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.sweep import load_sweep
from biorab.sweep.cost_estimate import plan_sweep
from biorab.sweep.run import run_sweep

# Key counts pinned on the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data

REPO = Path(__file__).resolve().parents[2]
CELLS = 13  # 2 models × 2 datasets × (none + BM25 counterfactual 20% / 100%) + Detect-and-Correct at 20%


# Detect-and-Correct of the 4,000-item counterfactual-20% corpus (800 corrupted): every item flagged and set
# to 1; 230 of the 800 corrupted items have gold 1 (also `biorab corpus transform` with this backend)
DC_SCORES = {"detection_precision": 0.2, "detection_recall": 1.0, "correction_accuracy": 0.2875}


def write_sweep(tmp_path: Path, data_dir: Path) -> Path:
    sweep = {
        "name": "sw",
        "output_dir": str(tmp_path / "runs"),
        "data_dir": str(data_dir),
        # fake-b answers every corpus-review prompt (no label choices) "incorrect: 1": it flags every item
        "models": {"fake-a": {"backend": "fake", "params": {"mode": "choice", "delay_s": 0.3}},
                   "fake-b": {"backend": "fake", "params": {"mode": "choice", "seed": 1,
                                                            "answer": "incorrect: 1"}}},
        "matrix": [{"models": ["fake-a", "fake-b"],
                    "datasets": [{"name": "ade_corpus_v2", "limit": 6}, {"name": "medmcqa", "limit": 5}],
                    "retrievers": ["none", "bm25"], "testbeds": ["counterfactual"], "rates": [0.2, 1.0]},
                   {"models": ["fake-b"], "datasets": [{"name": "ade_corpus_v2", "limit": 6}],
                    "retrievers": ["bm25"], "testbeds": ["counterfactual"], "rates": [0.2],
                    "methods": ["detect_correct"]}],
        "sampling": {"max_tokens": 8},
        "n_boot": 50,
        "resources": {"llm": {"batch_size": 2}},
        "tracking": {"experiment": "sw"},
    }
    path = tmp_path / "sw.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path


def sweep_process(path: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "biorab.cli.main", "sweep", str(path), "--no-ray"],
                            env=dict(os.environ), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def shards(sweep_dir: Path) -> int:
    return len(list(sweep_dir.glob("*/cells/*/part-*.parquet")))


def mlflow_runs(sweep_dir: Path) -> list:
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{sweep_dir / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("sw")
    return list(client.search_runs([experiment.experiment_id], max_results=1000))


@pytest.mark.slow
def test_sweep_killed_resumed_rerun(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the sweep dir's own store
    path = write_sweep(tmp_path, data_dir)
    sweep = load_sweep(path)
    sweep_dir = sweep.sweep_dir()
    before = plan_sweep(sweep, path=path)
    # the Detect-and-Correct cell's 6 prompts are estimated (its corpus is not transformed yet)
    assert (before.cells, before.unique_generation_keys, before.new_generations) == (CELLS, 72, 72)
    assert before.estimated_prompts == 50 and before.unique_retrieval_keys == 28

    # 1. killed (a real SIGKILL of the whole process group) once rows are on disk
    proc = sweep_process(path)
    deadline = time.monotonic() + 240
    while shards(sweep_dir) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)
    assert proc.returncode == -signal.SIGKILL, "the sweep finished before it could be killed"
    killed = mlflow_runs(sweep_dir)
    parents = [r for r in killed if "mlflow.parentRunId" not in r.data.tags]
    assert len(parents) == 1 and parents[0].info.status == "RUNNING"  # opened at start, left by the kill
    assert parents[0].data.metrics["rows_written"] >= 2  # progress logged live
    # a child per cell that started (rows on disk, or a batch in generation), none for the cells after
    started = [r for r in killed if "mlflow.parentRunId" in r.data.tags]
    on_disk = {p.parent.name for p in sweep_dir.glob("*/cells/*/part-*.parquet")}
    assert on_disk <= {r.data.tags["cell_id"] for r in started}
    assert 1 <= len(started) <= len(on_disk) + 1 < CELLS
    assert {r.info.status for r in started} == {"RUNNING"}
    assert all(r.data.metrics.get("rows_written", 0) >= 1 for r in started
               if r.data.tags["cell_id"] in on_disk)  # rows written, live on the child

    # 2. resumed by a new process: takes over the dead process's runs; 3. run again in-process, --fresh
    # (rows dropped, every generation read back from the cache)
    done = subprocess.run([sys.executable, "-m", "biorab.cli.main", "sweep", str(path), "--no-ray"],
                          env=dict(os.environ), cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    third = run_sweep(sweep, path=path, resume=False)
    assert third.generated == 0 and third.cache_hits == 72 and third.cells == CELLS

    runs = mlflow_runs(sweep_dir)
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = [r for r in runs if "mlflow.parentRunId" in r.data.tags]
    assert len(parents) == 1 and len(children) == CELLS
    assert {r.info.status for r in runs} == {"FINISHED"}
    assert {c.data.tags["mlflow.parentRunId"] for c in children} == {parents[0].info.run_id}
    assert len({c.data.tags["biorab.key"] for c in children}) == CELLS
    # the cell's own setting as params: cells differ where they differ
    settings = sorted((c.data.params["model"], c.data.params["dataset"], c.data.params["rate"])
                      for c in children)
    assert settings[:3] == [("fake-a", "ade_corpus_v2", ""), ("fake-a", "ade_corpus_v2", "0.2"),
                            ("fake-a", "ade_corpus_v2", "1")]
    assert "sampling.max_tokens" not in children[0].data.params  # shared config lives on the parent
    assert parents[0].data.params["matrix.0.rates.1"] == "1.0"
    cf = next(c for c in children if c.data.params["rate"] == "0.2" and c.data.params["dataset"] == "medmcqa"
              and c.data.params["model"] == "fake-b")
    assert cf.data.metrics["n"] == 5 and "ci_low/accuracy" in cf.data.metrics
    assert cf.data.params["testbed"] == "counterfactual" and cf.data.params["retriever"] == "bm25"
    assert cf.inputs.dataset_inputs[0].dataset.name == "medmcqa-test"

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{sweep_dir / 'mlflow.db'}")
    assert {a.path for a in client.list_artifacts(cf.info.run_id)} == {
        "config.yaml", "ledger", "predictions", "predictions.json"}
    table = json.loads(Path(client.download_artifacts(cf.info.run_id, "predictions.json",
                                                      str(tmp_path / "dl"))).read_text())
    assert len(table["data"]) == 5  # logged once, not appended on every rerun
    assert "report" in {a.path for a in client.list_artifacts(parents[0].info.run_id)}

    after = plan_sweep(sweep, path=path)
    # with the hits cached the prompts are exact (the Detect-and-Correct cell's too, keyed on the stored
    # transformed corpus; none estimated): two BM25 cells render one identical prompt, and in the corrected
    # corpus every value is 1, so each of its 6 prompts is the one counterfactual 20% or 100% renders for
    # that instance (whichever of them has value 1 for the retrieved example): 64 keys
    assert (after.unique_generation_keys, after.new_generations, after.estimated_prompts) == (64, 0, 0)
    prompts = {c["cell"]: set(pq.read_table(c["predictions"], columns=["prompt"])["prompt"].to_pylist())
               for f in sweep_dir.glob("fake-b*/summary.json") for c in json.loads(f.read_text())["cells"]}
    corrected = prompts["ade_corpus_v2-test__counterfactual-0.2-bm25-k1-detect_correct__bm25"]
    cf = "ade_corpus_v2-test__counterfactual-{}-bm25-k1__bm25"
    assert len(corrected) == 6 and corrected <= prompts[cf.format("0.2")] | prompts[cf.format("1")]
    assert after.new_retrieval_keys == 0
    report = (sweep_dir / "report" / "report.md").read_text("utf-8")
    assert "Table 2 shape" in report and "fake-b / bm25 / counterfactual (20%)" in report
    # the method's cell and its own scores against the corruption ledger (every item flagged, set to 1)
    assert "| fake-b / detect_correct / counterfactual (20%) | " in report
    dc = next(c for c in children if c.data.params["method"] == "detect_correct")
    assert dc.data.params["rate"] == "0.2" and dc.data.metrics["n"] == 6
    scores = {m: round(dc.data.metrics[m], 4) for m in
              ("detection_precision", "detection_recall", "correction_accuracy")}
    assert scores == DC_SCORES
    line = next(x for x in report.splitlines() if x.startswith("| fake-b / detect_correct / counterfactual "
                                                                "(20%) / ade_corpus_v2 |"))
    # precision, recall, F1, correction accuracy, corpus accuracy before / after (bold: best of a column)
    assert line.endswith("| **20.00 [19.0, 21.1]** | **100.00 [100.0, 100.0]** | **33.33 [31.9, 34.8]** | "
                         "**28.75 [26.5, 31.1]** | **80.00 [78.9, 81.0]** | **28.25 [27.0, 29.5]** |")
    assert (sweep_dir / "report" / "f1_vs_counterfactual_rate.png").stat().st_size > 1000
    assert (sweep_dir / "report" / "report.html").is_file()
