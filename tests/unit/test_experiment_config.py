"""ExperimentConfig: shapes, defaults, cells, fingerprints, and errors that name the key and the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.config_loading import load_config
from biorab.common.errors import ConfigError
from biorab.experiment import ExperimentConfig, RetrievalSpec

BASE = """
name: demo
datasets:
  - {name: ade_corpus_v2, split: test, limit: 4}
  - {name: medmcqa, limit: 3}
retrieval:
  - {testbed: none}
  - {testbed: labeled, retriever: bm25, k: 2}
backend: {name: fake, params: {mode: fixed, answer: "1"}}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_fit_two_cpus(tmp_path: Path) -> None:
    cfg = load_config(ExperimentConfig, write(tmp_path, BASE))
    res = cfg.resources
    assert res.address is None and res.num_cpus == 2
    # Fractional CPUs and pools of one: the 2-CPU deadlock (docs/notes/ray_on_small_machines.md) cannot
    # happen.
    used = res.retrieval.pool_size * res.retrieval.num_cpus + res.llm.pool_size * res.llm.num_cpus
    assert used + res.task_num_cpus < res.num_cpus
    assert cfg.sampling.max_tokens == 64 and cfg.parser == "robust" and cfg.tracking.uri is None


def test_cells_are_datasets_times_retrieval(tmp_path: Path) -> None:
    cfg = load_config(ExperimentConfig, write(tmp_path, BASE))
    cells = cfg.cells()
    assert [c.label for c in cells] == [
        "ade_corpus_v2-test__none",
        "ade_corpus_v2-test__labeled-bm25-k2",
        "medmcqa-test__none",
        "medmcqa-test__labeled-bm25-k2",
    ]
    assert len({c.cell_id for c in cells}) == 4
    assert all(c.cell_id.startswith(c.label + "__") for c in cells)


def test_fingerprint_ignores_limit_but_not_backend(tmp_path: Path) -> None:
    cfg = load_config(ExperimentConfig, write(tmp_path, BASE))
    more = cfg.with_limit(50)
    assert [c.cell_id for c in more.cells()] == [c.cell_id for c in cfg.cells()]
    assert all(d.limit == 50 for d in more.datasets)
    other = cfg.model_copy(update={"backend": cfg.backend.model_copy(update={"params": {"answer": "0"}})})
    assert {c.cell_id for c in other.cells()}.isdisjoint(c.cell_id for c in cfg.cells())


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ("colour: red\n", "colour"),
        ("sampling: {max_tokens: 0}\n", "sampling.max_tokens"),
        ("resources: {llm: {pool_size: 0}}\n", "resources.llm.pool_size"),
        ("tracking: {urii: x}\n", "tracking.urii"),
    ],
)
def test_invalid_keys_name_key_and_file(tmp_path: Path, extra: str, key: str) -> None:
    path = write(tmp_path, BASE + extra)
    with pytest.raises(ConfigError) as info:
        load_config(ExperimentConfig, path)
    assert info.value.key == key
    assert str(path) in str(info.value)


def test_pools_that_would_deadlock_a_local_ray_are_refused(tmp_path: Path) -> None:
    from biorab.runner.checks.validate import check_local_pools

    greedy = BASE + "resources: {num_cpus: 2, llm: {num_cpus: 2}}\n"
    path = write(tmp_path, greedy)
    with pytest.raises(ConfigError, match=r"need 2.5 CPUs but the local Ray has .*num_cpus=2") as info:
        check_local_pools(load_config(ExperimentConfig, path), path)
    assert info.value.key == "resources"
    # more logical CPUs, or a cluster address, are fine
    for ok in ("{num_cpus: 4, llm: {num_cpus: 2}}", "{address: auto, llm: {num_cpus: 8}}"):
        path = write(tmp_path, BASE + f"resources: {ok}\n")
        check_local_pools(load_config(ExperimentConfig, path), path)


def test_counterfactual_needs_rate() -> None:
    with pytest.raises(ValueError, match="rate"):
        RetrievalSpec(testbed="counterfactual")
    assert RetrievalSpec(testbed="counterfactual", rate=0.2).rate == 0.2


def test_bad_name_and_duplicate_retrieval(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(ExperimentConfig, write(tmp_path, BASE.replace("name: demo", "name: 'bad name'")))
    assert info.value.key == "name"
    dup = BASE.replace("  - {testbed: none}\n", "  - {testbed: none}\n  - {testbed: none}\n")
    with pytest.raises(ConfigError, match="identical") as info:
        load_config(ExperimentConfig, write(tmp_path, dup))
    assert info.value.key == "retrieval"


def test_config_is_frozen(tmp_path: Path) -> None:
    cfg = load_config(ExperimentConfig, write(tmp_path, BASE))
    with pytest.raises(ValueError):
        cfg.seed = 3  # type: ignore[misc]


def test_partial_stage_resources_keep_the_profile_defaults(tmp_path: Path) -> None:
    cfg = load_config(ExperimentConfig, write(tmp_path, BASE + "resources: {llm: {batch_size: 16}, "
                                                             "retrieval: {pool_size: 2}}\n"))
    llm, retrieval = cfg.resources.llm, cfg.resources.retrieval
    assert (llm.pool_size, llm.num_cpus, llm.num_gpus, llm.batch_size) == (1, 1.0, 0.0, 16)
    assert (retrieval.pool_size, retrieval.num_cpus, retrieval.batch_size) == (2, 0.25, 8)
    # three 1-CPU LLM actors no longer fit 2 CPUs (they silently became 0.5-CPU actors before)
    from biorab.runner.checks.validate import check_local_pools

    with pytest.raises(ConfigError, match=r"need 3.5 CPUs"):
        path = write(tmp_path, BASE + "resources: {llm: {pool_size: 3}}\n")
        check_local_pools(load_config(ExperimentConfig, path), path)
    with pytest.raises(ConfigError) as info:
        load_config(ExperimentConfig, write(tmp_path, BASE + "resources: {llm: {gpus: 1}}\n"))
    assert info.value.key == "resources.llm.gpus"
