"""A sweep on a local two-node Ray cluster (`ray.cluster_utils.Cluster`, both nodes on this machine) loses
its worker node mid-sweep (no graceful shutdown) and still finishes with results identical to an
undisturbed in-process run of the same sweep."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from biorab.sweep.config import SweepConfig
from biorab.sweep.run import run_sweep
from pipelines.ray_executor import RayExecutor

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def sweep_config(tmp_path: Path, data_dir: Path, name: str, resources: dict[str, Any]) -> SweepConfig:
    return SweepConfig.model_validate({
        "name": name, "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"fake-a": {"backend": "fake", "params": {"mode": "choice", "delay_s": 0.25}},
                   "fake-b": {"backend": "fake", "params": {"mode": "choice", "seed": 1, "delay_s": 0.25}}},
        "matrix": {"models": ["fake-a", "fake-b"], "datasets": [{"name": "medmcqa", "limit": 8}],
                   "retrievers": ["none", "bm25"], "testbeds": ["labeled"]},
        "sampling": {"max_tokens": 4}, "n_boot": 50, "tracking": {"enabled": False},
        "resources": resources,
    })


def predictions(result: Any) -> dict[str, list[tuple[str, str | None]]]:
    out = {}
    for run in result.runs:
        for cell in run.cells:
            rows = pq.read_table(cell.predictions_path, columns=["id", "pred_label"]).to_pylist()
            out[f"{run.run_dir.name}/{cell.plan.label}"] = [(r["id"], r["pred_label"]) for r in rows]
    return out


@pytest.fixture
def cluster(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Head (2 CPUs) + worker (2 CPUs) on 127.0.0.1 (STACK_NOTES §2.7: RAY_TMPDIR with a ``ray`` folder),
    under the session's token auth (tests/conftest.py): both nodes inherit the token, as a cluster's do."""
    from ray.cluster_utils import Cluster

    root = Path("/tmp") / f"rbn{time.monotonic_ns() % 10**6}"
    (root / "ray").mkdir(parents=True)
    monkeypatch.setenv("RAY_TMPDIR", str(root))
    c = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 2, "include_dashboard": False, "object_store_memory": 150_000_000,
        "temp_dir": str(root)})
    c.worker = c.add_node(num_cpus=2, object_store_memory=150_000_000)
    c.wait_for_nodes()
    yield c
    import ray

    ray.shutdown()
    c.shutdown()


def test_worker_node_lost_mid_sweep(tmp_path: Path, data_dir: Path, cluster: Any,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache-ref"))
    reference = run_sweep(sweep_config(tmp_path, data_dir, "ref", {}))

    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache-ray"))
    # Everything fits on the head alone (1.5 of its 2 CPUs), so losing the worker slows the sweep but never
    # leaves actors waiting for CPUs that are gone; Ray Data spreads the two LLM actors over both nodes.
    resources = {"address": cluster.address, "llm": {"pool_size": 2, "num_cpus": 0.5, "batch_size": 2},
                 "retrieval": {"num_cpus": 0.25, "batch_size": 2}, "task_num_cpus": 0.25, "blocks": 8}
    sweep = sweep_config(tmp_path, data_dir, "lost", resources)
    killed: dict[str, int] = {}

    def kill_worker_when_rows_appear() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            done = len(list(sweep.sweep_dir().glob("*/cells/*/part-*.parquet")))
            if done >= 2:
                killed["shards_before"] = done
                cluster.remove_node(cluster.worker, allow_graceful=False)
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_worker_when_rows_appear, daemon=True)
    killer.start()
    result = run_sweep(sweep, executor_for=lambda _model: RayExecutor())
    killer.join(5)
    assert "shards_before" in killed, "the worker node was never killed"
    total = sum(len(run.cells) for run in result.runs)
    assert total == 4 and result.failures == 0  # 2 models × medmcqa × {none, BM25}
    import ray

    ray.shutdown()
    got, want = predictions(result), predictions(reference)
    assert sorted(got) == sorted(want) and got == want
    got_metrics = {c.plan.label + run.run_dir.name: c.metrics for run in result.runs for c in run.cells}
    want_metrics = {c.plan.label + run.run_dir.name: c.metrics for run in reference.runs for c in run.cells}
    assert got_metrics == want_metrics
