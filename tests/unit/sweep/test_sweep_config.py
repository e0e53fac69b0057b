"""Sweep configs expand into the cells and `ExperimentConfig`s `biorab run` knows; errors name the file
and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from biorab.errors import ConfigError
from biorab.sweep import expand_cells, expand_runs, load_sweep

REPO = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def base(**matrix: object) -> dict:
    models = {"f": {"backend": "fake"}, "g": {"backend": "fake", "params": {"seed": 1}}}
    return {"name": "t", "models": models,
            "matrix": {"models": ["f"], "datasets": ["ade_corpus_v2"], **matrix}}


def test_smoke_sweep_expands_to_twelve_cells_in_two_runs() -> None:
    sweep = load_sweep(REPO / "jobs" / "sweep_smoke.yaml")
    assert len(expand_cells(sweep)) == 12
    runs = expand_runs(sweep)
    assert [(r.model, r.config.name, r.config.backend.name) for r in runs] == [
        ("smollm2", "smollm2", "transformers"), ("fake", "fake", "fake")]
    # dataset-major, settings ordered by prompt prefix (template, retriever, testbed, rate)
    assert [c.label for c in runs[1].config.cells()] == [
        "ade_corpus_v2-test__counterfactual-0.2-bm25-k1__bm25",
        "ade_corpus_v2-test__counterfactual-1-bm25-k1__bm25",
        "ade_corpus_v2-test__none__noexample",
        "medmcqa-test__counterfactual-0.2-bm25-k1__bm25",
        "medmcqa-test__counterfactual-1-bm25-k1__bm25",
        "medmcqa-test__none__noexample",
    ]
    assert runs[0].config.backend.params == {"batch_size": 8, "model": "smollm2", "dtype": "bfloat16"}
    assert runs[0].config.output_dir == "runs/sweep-smoke"


def test_paper_grid_counts() -> None:
    sweep = load_sweep(REPO / "jobs" / "paper.yaml")
    assert len(expand_cells(sweep)) == 198
    per_model: dict[str, int] = {}
    for run in expand_runs(sweep):
        per_model[run.model] = per_model.get(run.model, 0) + len(run.config.cells())
    assert per_model == {"llama2-13b": 70, "medllama-13b": 32, "llama3-8b": 32, "phi4-14b": 32,
                         "qwen2.5-32b": 32}
    qwen = next(r.config for r in expand_runs(sweep) if r.model == "qwen2.5-32b")
    assert qwen.backend.params["tensor_parallel_size"] == 2 and qwen.resources.llm.num_gpus == 2
    assert qwen.resources.llm.num_cpus == 4  # the sweep's llm resources kept under the model's override


def test_none_retriever_ignores_testbeds_and_excludes_match_lists(tmp_path: Path) -> None:
    data = base(models=["f", "g"], retrievers=["none", "bm25"], testbeds=["labeled", "counterfactual"],
                rates=[0.2, 0.8], exclude=[{"model": "g", "rate": [0.2, 0.8]}])
    cells = expand_cells(load_sweep(write(tmp_path, data)))
    got = sorted((c.model, c.retrieval.testbed, c.retrieval.rate) for c in cells)
    assert got == [("f", "counterfactual", 0.2), ("f", "counterfactual", 0.8), ("f", "labeled", None),
                   ("f", "none", None), ("g", "labeled", None), ("g", "none", None)]


def test_blocks_union_without_duplicates(tmp_path: Path) -> None:
    data = base(retrievers=["none", "bm25"])
    data["matrix"] = [data["matrix"], {**data["matrix"], "retrievers": ["bm25"], "testbeds": ["unlabeled"]}]
    cells = expand_cells(load_sweep(write(tmp_path, data)))
    assert [c.retrieval.testbed for c in cells] == ["none", "labeled", "unlabeled"]


@pytest.mark.parametrize(("change", "key", "message"), [
    ({"exclude": [{"modle": "f"}]}, "matrix.0.exclude", "unknown axis 'modle'"),
    ({"testbeds": ["counterfactual"]}, "matrix.0", "needs 'rates'"),
    ({"models": ["nope"]}, None, "matrix.0.models.0: unknown model profile 'nope'"),
    ({"retrievers": ["bm26"]}, None, "unknown retriever profile 'bm26'"),
])
def test_errors_name_file_and_key(tmp_path: Path, change: dict, key: str | None, message: str) -> None:
    path = write(tmp_path, base(**change))
    with pytest.raises(ConfigError) as err:
        expand_cells(load_sweep(path))
    assert err.value.key == key and message in str(err.value) and str(path) in str(err.value)


def test_methods_axis_passes_through_to_the_retrieval_entry(tmp_path: Path) -> None:
    path = write(tmp_path, base(retrievers=["bm25"], testbeds=["counterfactual"], rates=[0.8],
                                methods=["none", "detect_correct"]))
    cells = expand_cells(load_sweep(path))
    assert sorted((c.method, c.retrieval.method, c.retrieval.testbed) for c in cells) == [
        ("detect_correct", "detect_correct", "counterfactual"), ("none", "none", "counterfactual")]
