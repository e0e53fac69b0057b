"""A run's local Ray keeps its idle task workers (`pipelines.ray_setup.pipeline_workers`): with Ray's
default limit (the node's CPUs, counting the actors' processes too) every task worker that waited more
than a second for the slow actor was killed, and each later task started a new Python process."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

from biorab.experiment import ResourcesConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]


def test_the_task_stages_reuse_their_workers_while_the_actor_works() -> None:
    import ray
    import ray.data

    from pipelines.ray_setup import init_ray

    # defined here, so that Ray's workers get them by value (they cannot import this test module)
    class _Slow:
        """An actor well over Ray's idle-worker kill delay (1 s) per batch, like the LLM actor."""

        def __call__(self, batch: pa.Table) -> pa.Table:
            time.sleep(2.5)
            return batch

    def _pid(batch: pa.Table) -> pa.Table:
        return batch.append_column(f"pid{batch.num_columns}", pa.array([os.getpid()] * batch.num_rows))

    resources = ResourcesConfig(num_cpus=2)  # the smoke job's: actor pools of one, tasks of 0.25 CPU
    assert init_ray(resources)
    try:
        task = {"num_cpus": resources.task_num_cpus, "batch_size": 4, "batch_format": "pyarrow"}
        actor = {"batch_size": 4, "batch_format": "pyarrow"}
        blocks = [pa.table({"i": list(range(4 * b, 4 * b + 4))}) for b in range(5)]
        ds = ray.data.from_arrow(blocks)
        ds = ds.map_batches(_Slow, compute=ray.data.ActorPoolStrategy(size=1), num_cpus=0.25, **actor)
        ds = ds.map_batches(_pid, **task)  # render
        ds = ds.map_batches(_Slow, compute=ray.data.ActorPoolStrategy(size=1), num_cpus=1.0, **actor)
        ds = ds.map_batches(_pid, **task)  # parse + write
        out = list(ds.iter_batches(batch_format="pyarrow", batch_size=None))
    finally:
        ray.shutdown()
    assert sum(b.num_rows for b in out) == 20
    workers = {pid for b in out for col in ("pid1", "pid2") for pid in b.column(col).to_pylist()}
    # kept: the task workers Ray starts with (one per CPU) or fewer; with Ray's default limit, 4 processes
    assert len(workers) <= resources.num_cpus, workers
