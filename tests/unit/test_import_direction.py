"""Imports point one way: biorab < pipelines < serve/training; biorab loads the heavy stack lazily only (at a
module's top only in its engine modules, which nothing light imports at its top), and reaches an outer layer
only from inside a CLI command; inside the library the RAL core, generation, tracking, fetching and the
config module import only what their rules allow (type hints included); the parsers and the metrics read
no task registry; and no modules (type hints included), and no packages, import each other in a cycle.
Relative and package imports count as the modules they name (`tests/support/import_rules.py`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.import_rules import (
    ENGINES,
    check_source,
    check_tree,
    describe_cycle,
    describe_package_cycle,
    graph_of,
    heavy_on_import,
    import_cycles,
    import_graph,
    library_heavy_on_import,
    package_graph,
    repo_packages,
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
              "from biorab.common.config_sections import Section\n"
              "from biorab.drugmech.experiment.spec import DrugMechSpec\n"
              "def f():\n    from biorab.learn.hit_filter import HitFilterSpec\n"
              "    from biorab.runner.plan.benchmark_source import BioRABSource\n")
    found = check_source(source, layer="biorab", path="biorab/experiment.py")
    assert [(v.line, v.module) for v in found] == [
        (3, "biorab.drugmech.experiment.spec"), (5, "biorab.learn.hit_filter"),
        (6, "biorab.runner.plan.benchmark_source")]
    assert found[0].why.startswith(
        "biorab.experiment may import only biorab.{experiment, common.config_sections")


def test_no_two_modules_of_any_layer_import_each_other() -> None:
    graph = import_graph(REPO, typing=True)
    # The graph spans the four layers (the check decides on all of them) and sees lazy imports and type
    # hints.
    assert {m.split(".")[0] for m in graph} == {"biorab", "pipelines", "serve", "training"}
    assert len(graph) > 250
    assert "biorab.generation.model_info" in graph["biorab.tracking.experiment"]  # inside a function
    assert "biorab.tasks.template" in graph["biorab.tasks.task_types"]  # under TYPE_CHECKING only
    assert "biorab.tasks.template" not in import_graph(REPO)["biorab.tasks.task_types"]
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
    # Counted with the type hints (the module cycle check does), the typing-only back edge closes a circle.
    typed = graph_of(sources, typing=True)
    assert import_cycles(typed) == [["biorab.a", "biorab.b", "biorab.b.c"], ["biorab.d", "biorab.d2"],
                                    ["serve.x", "serve.y"]]
    assert describe_cycle(typed, ["biorab.d", "biorab.d2"]) == (
        "biorab.d:4 -> biorab.d2; biorab.d2:1 -> biorab.d")
    assert describe_cycle(graph, ["serve.x", "serve.y"]) == "serve.x:1 -> serve.y; serve.y:1 -> serve.x"
    # A package importing its submodules, which import siblings through the package path, is no cycle.
    package = {"biorab.p": "from biorab.p.q import f\n", "biorab.p.q": "from biorab.p.r import g\n",
               "biorab.p.r": "def g():\n    pass\n"}
    assert import_cycles(graph_of(package)) == []


def test_a_planted_relative_import_counts_as_the_module_it_names() -> None:
    source = ("from ..learn import hit_filter\nfrom .steps import retrieve\n"
              "def f():\n    from .. import methods\n    from ..common import labels\n")
    found = check_source(source, layer="biorab", path="biorab/ral/planted.py")
    assert [(v.line, v.module) for v in found] == [(1, "biorab.learn.hit_filter"), (4, "biorab.methods")]
    # One dot in a package's __init__ is the package itself; a dot too many is an error, not a pass.
    assert check_source("from . import steps\n", layer="biorab", path="biorab/ral/__init__.py") == []
    up = check_source("from .. import learn\n", layer="biorab", path="biorab/ral/__init__.py")
    assert [v.module for v in up] == ["biorab.learn"]
    with pytest.raises(ValueError, match="beyond the top package"):
        check_source("from .... import x\n", layer="biorab", path="biorab/ral/planted.py")
    # Relative imports are edges of the module graph too.
    graph = graph_of({"serve.x": "from . import y\n", "serve.y": "from .x import f\n"})
    assert import_cycles(graph) == [["serve.x", "serve.y"]]


def test_a_planted_package_import_counts_as_the_package() -> None:
    found = check_source("from biorab import learn\nfrom biorab.common import labels\n", layer="biorab",
                         path="biorab/ral/planted.py")
    assert [(v.line, v.module) for v in found] == [(1, "biorab.learn")]
    assert found[0].why.startswith("biorab.ral may import only")
    lazy = check_source("def f():\n    from biorab import runner\n", layer="biorab",
                        path="biorab/tracking/planted.py")
    assert [(v.line, v.module) for v in lazy] == [(2, "biorab.runner")]


def test_parsers_and_metrics_read_no_task_registry_even_in_type_hints() -> None:
    source = ("from typing import TYPE_CHECKING\n"
              "from biorab.common.registry import PARSERS, TASKS\n"
              "from ..common.registry import METRICS\n"
              "if TYPE_CHECKING:\n    from biorab.tasks.template import Template\n"
              "def f():\n    from biorab.tasks import get_task\n    from ..common import registry\n")
    for package in ("parsing", "metrics"):
        found = check_source(source, layer="biorab", path=f"biorab/{package}/planted.py")
        assert [(v.line, v.module, v.why) for v in found] == [
            (2, "biorab.common.registry.TASKS",
             f"biorab.{package} must not read biorab.common.registry.TASKS"),
            (5, "biorab.tasks.template", f"biorab.{package} must not import biorab.{{tasks}}"),
            (7, "biorab.tasks", f"biorab.{package} must not import biorab.{{tasks}}")]
    # The task types, above both, read their registry and call both.
    assert check_source(source, layer="biorab", path="biorab/tasks/planted.py") == []


def test_fetching_asks_nothing_of_the_runner() -> None:
    source = "def f():\n    from biorab.runner.checks.data_needs import missing_files\n"
    found = check_source(source, layer="biorab", path="biorab/fetching/planted.py")
    assert [(v.line, v.why) for v in found] == [(2, "biorab.fetching must not import biorab.{runner}")]
    assert check_source(source, layer="biorab", path="biorab/runner/checks/planted.py") == []


def test_no_two_packages_import_each_other() -> None:
    graph, packages = import_graph(REPO), repo_packages(REPO)
    pgraph = package_graph(graph, packages)
    assert {"biorab.ral", "biorab.corpora", "biorab.drugmech.scoring", "biorab.common"} <= set(pgraph)
    assert "biorab.corpora" in pgraph["biorab.retrieval"]  # the retriever reads the corpus store
    assert [describe_package_cycle(pgraph, c) for c in import_cycles(pgraph)] == []


def test_type_hints_point_down_too() -> None:
    # A type hint is an arrow of meaning: with the `TYPE_CHECKING` imports counted, the packages still form
    # no circle, so every arrow, hints included, points to a lower floor (docs/architecture.md).
    typed = package_graph(import_graph(REPO, typing=True), repo_packages(REPO))
    assert "biorab.ral.specs" in typed["biorab.diagnostics"]  # CellResult's module, a type hint's target
    assert [describe_package_cycle(typed, c) for c in import_cycles(typed)] == []
    planted = {"biorab.p": "", "biorab.p.a": "import biorab.q.b\n", "biorab.q": "",
               "biorab.q.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import biorab.p.a\n"}
    pkgs = {"biorab.p", "biorab.q"}
    assert import_cycles(package_graph(graph_of(planted, pkgs), pkgs)) == []  # the floors' runtime graph
    assert import_cycles(package_graph(graph_of(planted, pkgs, typing=True), pkgs)) != []


def test_a_planted_package_cycle_fails_without_any_module_cycle() -> None:
    sources = {"biorab.p": "", "biorab.p.a": "from biorab.q.b import f\n",
               "biorab.q": "", "biorab.q.b": "def f():\n    pass\n",
               "biorab.q.c": "def g():\n    from biorab.p.d import h\n", "biorab.p.d": "def h():\n    pass\n",
               "biorab.top": "import biorab.p.a\n", "biorab.other": "import biorab.top\n"}
    packages = {"biorab.p", "biorab.q"}
    graph = graph_of(sources, packages)
    assert import_cycles(graph) == []
    pgraph = package_graph(graph, packages)
    assert import_cycles(pgraph) == [["biorab.p", "biorab.q"]]
    assert describe_package_cycle(pgraph, ["biorab.p", "biorab.q"]) == (
        "biorab.p.a:1 -> biorab.q.b; biorab.q.c:2 -> biorab.p.d")
    # A module directly in the layer's folder is a unit of its own, not one package with all the others.
    assert set(pgraph) == {"biorab.p", "biorab.q", "biorab.top", "biorab.other"}


def test_a_planted_heavy_module_top_import_fails_outside_an_engine() -> None:
    source = "import numpy\nimport torch\nfrom transformers import AutoModel\ndef f():\n    import faiss\n"
    found = check_source(source, layer="biorab", path="biorab/retrieval/planted.py")
    assert [(v.line, v.module, v.why) for v in found] == [
        (2, "torch", "torch only inside functions"),
        (3, "transformers", "transformers only inside functions")]
    # An engine may be built on the libraries it names, and only on those.
    engine = check_source(source + "import faiss\n", layer="biorab", path="biorab/generation/hf/backend.py")
    assert [(v.line, v.module) for v in engine] == [(6, "faiss")]
    # Importing an engine at the top of a light module would make that module heavy.
    light = check_source("from biorab.generation.hf.backend import TransformersBackend\n", layer="biorab",
                         path="biorab/generation/planted.py")
    assert [v.why for v in light] == [
        "biorab.generation.hf.backend is an engine module (torch, transformers): import it inside functions"]
    assert check_source("def f():\n    from biorab.generation.hf.backend import X\n", layer="biorab",
                        path="biorab/generation/planted.py") == []
    assert set(ENGINES) <= {m for m in import_graph(REPO)}


def test_a_planted_chain_to_the_heavy_stack_on_import_fails() -> None:
    sources = {"biorab": "from biorab.a import f\n",
               "biorab.a": "from .b import g\ndef f():\n    import ray\n",
               "biorab.b": "import torch\n", "biorab.c": "def h():\n    import biorab.b\n"}
    assert heavy_on_import(sources, {"biorab"}, ["biorab"]) == ["biorab -> biorab.a -> biorab.b: torch"]
    sources["biorab.a"] = "def f():\n    from .b import g\n"
    assert heavy_on_import(sources, {"biorab"}, ["biorab"]) == []


def test_importing_any_library_package_reaches_no_heavy_module() -> None:
    assert library_heavy_on_import(REPO) == []
