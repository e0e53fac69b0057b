"""The awareness probe on the Ray Data pipeline: the probe runs in the LLM actor and the rows, judgements
and negative-awareness rates equal the in-process runner's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.experiment import ResourcesConfig
from biorab.runner import run_experiment
from pipelines.ray_executor import RayExecutor
from tests.support.awareness_runs import COUNTS, N, na_config

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]
PROBE_COLUMNS = ("id", "hits", "gen_text", "pred_label", "probe_prompt", "probe_gen_text", "probe_judgement")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    import ray

    from pipelines.ray_setup import init_ray

    assert init_ray(ResourcesConfig(num_cpus=2))
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def test_ray_probe_matches_in_process(local_ray: None, tmp_path: Path, data_dir: Path) -> None:
    distributed = run_experiment(na_config(tmp_path / "ray", data_dir), executor=RayExecutor())
    assert distributed.stats.generated == N and distributed.stats.probe_generated == N
    (cell,) = distributed.cells
    assert cell.extra["awareness_counts"] == COUNTS
    assert cell.metrics["true_negative_awareness_rate"]["value"] == pytest.approx(1 / 2)
    assert cell.metrics["false_negative_awareness_rate"]["value"] == pytest.approx(3 / 4)
    local = run_experiment(na_config(tmp_path / "local", data_dir))
    assert local.stats.generated == 0 and local.stats.probe_cache_hits == N  # the Ray run cached them

    def rows(result: object) -> list[dict[str, object]]:
        path = result.cells[0].predictions_path  # type: ignore[attr-defined]
        return [{k: r[k] for k in PROBE_COLUMNS} for r in pq.read_table(path).to_pylist()]

    assert rows(distributed) == rows(local)
    assert local.cells[0].metrics == cell.metrics
