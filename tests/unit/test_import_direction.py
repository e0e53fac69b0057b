"""Imports point one way: biorab < pipelines < serve/training; biorab loads ray and mlflow lazily only, and
reaches an outer layer only from inside a CLI command; inside the library the RAL core, generation,
tracking and the config module import only what their rules allow; and no modules import each other in a
cycle (`tests/support/import_rules.py`)."""

from __future__ import annotations

from pathlib import Path

from tests.support.import_rules import (
    check_source,
    check_tree,
    describe_cycle,
    graph_of,
    import_cycles,
    import_graph,
)

REPO = Path(__file__).resolve().parents[2]


def test_no_module_of_any_layer_imports_upward() -> None:
    violations = check_tree(REPO)
    assert [str(v) for v in violations] == []


def test_the_walk_covers_every_layer_present() -> None:
    # A checker that walked nothing would pass: it must see the library and the Ray layer.
    assert (REPO / "biorab" / "runner" / "run.py").is_file()
    assert (REPO / "pipelines" / "ray_executor.py").is_file()
    assert len(list((REPO / "biorab").rglob("*.py"))) > 100


def test_a_planted_module_level_ray_import_fails() -> None:
    found = check_source("import ray\n", layer="biorab", path="biorab/planted.py")
    assert [(v.line, v.module, v.why) for v in found] == [(1, "ray", "ray only inside functions")]


def test_planted_upward_imports_fail_even_inside_functions_outside_the_cli() -> None:
    source = ("def run():\n    from pipelines.ray_executor import RayExecutor\n\n"
              "from mlflow import log_metric\n")
    found = check_source(source, layer="biorab", path="biorab/runner/planted.py")
    assert [(v.line, v.module) for v in found] == [(2, "pipelines.ray_executor"), (4, "mlflow")]


def test_the_cli_may_choose_the_executor_inside_a_command_only() -> None:
    inside = "def run():\n    from pipelines.ray_executor import RayExecutor\n    import ray\n"
    assert check_source(inside, layer="biorab", path="biorab/cli/run.py") == []
    at_top = check_source("from pipelines.ray_executor import RayExecutor\n", layer="biorab",
                          path="biorab/cli/run.py")
    assert [v.module for v in at_top] == ["pipelines.ray_executor"]


def test_type_checking_imports_and_lower_layers_are_allowed() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import ray\nimport biorab.runner\n"
    assert check_source(source, layer="biorab", path="biorab/x.py") == []
    assert check_source("import biorab.runner\nimport ray\n", layer="pipelines", path="pipelines/x.py") == []
    assert [v.module for v in check_source("import serve.app\n", layer="pipelines", path="pipelines/x.py")] \
        == ["serve.app"]


def test_the_ral_core_imports_none_of_its_plug_ins_even_lazily() -> None:
    source = ("from biorab.caches import HitStore\n"
              "def build():\n    from biorab.learn.hit_filter import build_hit_filter\n"
              "    from biorab.methods.corpus_transform import LiveTransform\n"
              "    import biorab.runner.store.shards\n")
    found = check_source(source, layer="biorab", path="biorab/ral/planted.py")
    assert [(v.line, v.module) for v in found] == [
        (3, "biorab.learn.hit_filter"), (4, "biorab.methods.corpus_transform"),
        (5, "biorab.runner.store.shards")]
    assert found[0].why.startswith("biorab.ral may import only biorab.{ral, tasks, parsing")
    # The same imports are fine elsewhere in the library (the runner may use the methods).
    assert check_source(source, layer="biorab", path="biorab/runner/planted.py") == []


def test_generation_imports_nothing_of_training() -> None:
    source = "def load():\n    from biorab.learn.checks import check_adapter_base\n"
    found = check_source(source, layer="biorab", path="biorab/generation/planted.py")
    assert [(v.line, v.module) for v in found] == [(2, "biorab.learn.checks")]
    fine = "def load():\n    from biorab.generation.adapter_base import check_adapter_base\n"
    assert check_source(fine, layer="biorab", path="biorab/generation/planted.py") == []


def test_tracking_runs_neither_the_runner_nor_a_sweep_even_lazily() -> None:
    source = ("from biorab.tracking.runs import open_run\n"
              "def replay():\n    from biorab.runner import run_experiment\n"
              "    from biorab.sweep.run import run_sweep\n    import biorab.sweep\n")
    found = check_source(source, layer="biorab", path="biorab/tracking/planted.py")
    assert [(v.line, v.module) for v in found] == [(3, "biorab.runner"), (4, "biorab.sweep.run"),
                                                   (5, "biorab.sweep")]
    assert found[0].why == "biorab.tracking must not import biorab.{runner, sweep}"
    # The use case that replays them is the CLI's.
    assert check_source(source, layer="biorab", path="biorab/cli/replay_tracking.py") == []


def test_the_config_module_names_no_experiment_kind_or_trainer() -> None:
    source = ("from biorab.generation.base import SamplingParams\n"
              "from biorab.config_sections import Section\n"
              "from biorab.drugmech.experiment.spec import DrugMechSpec\n"
              "def f():\n    from biorab.learn.hit_filter import HitFilterSpec\n"
              "    from biorab.runner.plan.benchmark_source import BioRABSource\n")
    found = check_source(source, layer="biorab", path="biorab/experiment.py")
    assert [(v.line, v.module) for v in found] == [
        (3, "biorab.drugmech.experiment.spec"), (5, "biorab.learn.hit_filter"),
        (6, "biorab.runner.plan.benchmark_source")]
    assert found[0].why.startswith("biorab.experiment may import only biorab.{experiment, config_sections")


def test_no_two_modules_of_any_layer_import_each_other() -> None:
    graph = import_graph(REPO)
    # The graph spans the four layers (the check decides on all of them) and sees lazy imports.
    assert {m.split(".")[0] for m in graph} == {"biorab", "pipelines", "serve", "training"}
    assert len(graph) > 250
    assert "biorab.generation.model_info" in graph["biorab.tracking.experiment"]  # inside a function
    assert [describe_cycle(graph, c) for c in import_cycles(graph)] == []


def test_a_planted_cycle_fails_through_a_lazy_import_and_a_package() -> None:
    sources = {
        "biorab.a": "from biorab.b import thing\n",  # `thing` is a name of the package biorab.b
        "biorab.b": "from biorab.b.c import thing\n",
        "biorab.b.c": "def thing():\n    from biorab.a import x\n",  # lazy: still an edge
        "biorab.d": "import biorab.a\nfrom typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    import biorab.d2\n",
        "biorab.d2": "import biorab.d\n",  # typing-only back edge: no cycle
        "serve.x": "import serve.y\n", "serve.y": "from serve import x\n",
    }
    graph = graph_of(sources)
    assert import_cycles(graph) == [["biorab.a", "biorab.b", "biorab.b.c"], ["serve.x", "serve.y"]]
    assert describe_cycle(graph, ["serve.x", "serve.y"]) == "serve.x:1 -> serve.y; serve.y:1 -> serve.x"
    # A package importing its submodules, which import siblings through the package path, is no cycle.
    package = {"biorab.p": "from biorab.p.q import f\n", "biorab.p.q": "from biorab.p.r import g\n",
               "biorab.p.r": "def g():\n    pass\n"}
    assert import_cycles(graph_of(package)) == []
