"""The pipeline's input (`pipelines.ray_executor.input_dataset`): the rows split on the driver into one
block per LLM batch, in order, with their metadata known before anything runs (``from_blocks``: no remote
metadata task waiting for a worker process on a fresh local Ray)."""

from __future__ import annotations

import time

import pytest

from biorab.experiment import ResourcesConfig, StageResources

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_rows_become_one_block_per_llm_batch_in_order() -> None:
    import ray

    from pipelines.ray_executor import input_dataset
    from pipelines.ray_setup import init_ray

    def _marker() -> int:  # defined here, so that Ray's workers get it by value
        return 1

    rows = [{"cell_id": f"c{i % 3}", "id": str(i), "text": f"row {i}"} for i in range(40)]
    assert init_ray(ResourcesConfig(num_cpus=2))
    try:
        ds = input_dataset(rows, ResourcesConfig(num_cpus=2, llm=StageResources(batch_size=16)))
        assert ds.num_blocks() == 3  # ceil(40 / 16)
        assert ds.count() == 40
        sizes = [bundle.num_rows() for bundle in ds.iter_internal_ref_bundles()]
        assert sizes == [13, 14, 13]  # near-equal, as `input_blocks` cut them
        # the rows in their order, in the pipeline's row schema (the fields a row has not reached are null)
        assert [{k: row[k] for k in ("cell_id", "id", "text")} for row in ds.take_all()] == rows
        chosen = input_dataset(rows, ResourcesConfig(num_cpus=2, blocks=5))
        assert chosen.num_blocks() == 5
        # no task ran for the metadata (``from_arrow`` runs `get_table_block_metadata_schema` per block):
        # a marker task is run, and Ray's task timeline read once the marker is in it
        assert ray.get(ray.remote(_marker).remote()) == 1
        names: set[str] = set()
        deadline = time.monotonic() + 30
        while not any("_marker" in n for n in names) and time.monotonic() < deadline:
            time.sleep(0.5)
            names = {str(event.get("name", "")) for event in ray.timeline()}
        assert any("_marker" in n for n in names), sorted(names)
        assert not [n for n in names if "metadata" in n], sorted(names)
    finally:
        ray.shutdown()
