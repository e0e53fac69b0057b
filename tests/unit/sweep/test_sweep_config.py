"""Sweep configs expand into the cells and `ExperimentConfig`s `biorab run` knows; errors name the file
and the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from biorab.common.errors import ConfigError
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


def test_smoke_sweep_expands_to_thirteen_cells_in_three_runs() -> None:
    sweep = load_sweep(REPO / "jobs" / "sweep_smoke.yaml")
    assert len(expand_cells(sweep)) == 13  # 2 models x 2 datasets x 3 settings + Detect-and-Correct
    runs = expand_runs(sweep)
    # the fake's datasets differ in their settings (Detect-and-Correct on Ade-corpus-v2 only): two runs
    assert [(r.model, r.config.name, r.config.backend.name) for r in runs] == [
        ("smollm2", "smollm2", "transformers"), ("fake", "fake__d1421f", "fake"),
        ("fake", "fake__cd03a5", "fake")]
    # dataset-major, settings ordered by prompt prefix (template, retriever, testbed, rate)
    assert [c.label for c in runs[0].config.cells()] == [
        "ade_corpus_v2-test__counterfactual-0.2-bm25-k1__bm25",
        "ade_corpus_v2-test__counterfactual-1-bm25-k1__bm25",
        "ade_corpus_v2-test__none__noexample",
        "medmcqa-test__counterfactual-0.2-bm25-k1__bm25",
        "medmcqa-test__counterfactual-1-bm25-k1__bm25",
        "medmcqa-test__none__noexample",
    ]
    assert [c.label for c in runs[1].config.cells()][:2] == [
        "ade_corpus_v2-test__counterfactual-0.2-bm25-k1__bm25",
        "ade_corpus_v2-test__counterfactual-0.2-bm25-k1-detect_correct__bm25"]
    assert runs[0].config.backend.params == {"batch_size": 8, "model": "smollm2", "dtype": "bfloat16"}
    assert runs[0].config.output_dir == "runs/sweep-smoke"


def test_paper_grid_counts() -> None:
    sweep = load_sweep(REPO / "jobs" / "paper.yaml")
    cells = expand_cells(sweep)
    # Tables 1-3: 198 cells; Table 4: LLM labeling on 2 datasets; Table 5: Detect-and-Correct on PharmKG;
    # Table 6: 2 datasets x 2 ratios (their comparison cells are Table 2's, dropped as duplicates); Table 1's
    # 24 retrieval cells per LLM again with exclude_test_duplicates on (5 LLMs)
    assert len(cells) == 198 + 2 + 1 + 4 + 5 * 24 == 325
    excluded = [c for c in cells if c.retrieval.exclude_test_duplicates]
    assert len(excluded) == 120 and {c.retrieval.testbed for c in excluded} == {"labeled"}
    assert {c.retriever for c in excluded} == {"bm25-notestdups", "bm25-cls-notestdups",
                                               "contriever-notestdups", "medcpt-notestdups"}
    assert sorted((c.dataset.name, c.retrieval.testbed, c.retrieval.rate, c.method) for c in cells
                  if c.method != "none") == [("ade_corpus_v2", "unlabeled", None, "llm_label"),
                                             ("pharmkg", "counterfactual", 1.0, "detect_correct"),
                                             ("semclass", "unlabeled", None, "llm_label")]
    resampled = [(c.dataset.name, c.dataset.resample.ratio, c.retriever, c.sampling.score_labels)
                 for c in cells if c.dataset.resample is not None]
    assert sorted(resampled) == [
        ("ade_corpus_v2", "1:1", "medcpt", True), ("ade_corpus_v2", "1:5", "medcpt", True),
        ("semclass", "1:1", "contriever", True), ("semclass", "1:5", "contriever", True)]
    per_model: dict[str, int] = {}
    for run in expand_runs(sweep):
        per_model[run.model] = per_model.get(run.model, 0) + len(run.config.cells())
        # label scores only where the block asks for them (Table 6): other cells keep their generation keys
        assert run.config.sampling.score_labels == any(d.resample is not None for d in run.config.datasets)
    assert per_model == {"llama2-13b": 101, "medllama-13b": 56, "llama3-8b": 56, "phi4-14b": 56,
                         "qwen2.5-32b": 56}
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


def test_excluded_combinations_are_never_validated(tmp_path: Path) -> None:
    # llm_label applies to the unlabeled testbed only: excluded elsewhere, it is no error
    data = base(retrievers=["none", "bm25"], testbeds=["labeled", "unlabeled"], methods=["none", "llm_label"],
                exclude=[{"method": "llm_label", "testbed": ["none", "labeled"]}])
    cells = expand_cells(load_sweep(write(tmp_path, data)))
    assert sorted((c.retrieval.testbed, c.method) for c in cells) == [
        ("labeled", "none"), ("none", "none"), ("unlabeled", "llm_label"), ("unlabeled", "none")]
    del data["matrix"]["exclude"]
    with pytest.raises(ConfigError, match="method llm_label applies to the unlabeled testbed"):
        expand_cells(load_sweep(write(tmp_path, data)))


def test_block_sampling_is_a_run_of_its_own(tmp_path: Path) -> None:
    data = base(retrievers=["none"])
    data["sampling"] = {"max_tokens": 8}
    resampled = [{"name": "ade_corpus_v2", "resample": {"ratio": "1:5", "seed": 0}}]
    data["matrix"] = [data["matrix"], {**data["matrix"], "datasets": resampled,
                                       "sampling": {"score_labels": True}}]
    runs = expand_runs(load_sweep(write(tmp_path, data)))
    got = [(len(r.config.cells()), r.config.sampling.max_tokens, r.config.sampling.score_labels)
           for r in runs]
    assert got == [(1, 8, False), (1, 8, True)]
    assert runs[0].config.name != runs[1].config.name and runs[0].config.name.startswith("f__")
    data["matrix"][1]["sampling"] = {"max_tokns": 3}
    with pytest.raises(ConfigError, match="matrix.1.sampling.max_tokns"):
        load_sweep(write(tmp_path, data))
