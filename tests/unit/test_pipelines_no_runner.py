"""Nothing under ``pipelines/`` imports ``biorab.runner`` (issue 34): the Ray layer wraps the core's
pipeline (`biorab.ral.specs.pipeline`) and takes what only the runner owns (writing rows, their prefix order)
from the request (`biorab.execution.ExecutionRequest`), never from the runner's modules.

Kept apart from `tests/support/import_rules.py` on purpose (its own small check, any import anywhere in a
module: under ``if TYPE_CHECKING:``, inside functions, and relative imports resolved)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FORBIDDEN = "biorab.runner"


def runner_imports(source: str, module: str) -> list[tuple[int, str]]:
    """(line, imported module) of every import of `FORBIDDEN` in `source` (the module named `module`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                package = module.split(".")[: -node.level]
                base = ".".join([*package, base] if base else package)
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        found += [(node.lineno, n) for n in names if n == FORBIDDEN or n.startswith(FORBIDDEN + ".")]
    return sorted(set(found))


def test_nothing_under_pipelines_imports_the_runner() -> None:
    found = {}
    for file in sorted((REPO / "pipelines").rglob("*.py")):
        module = ".".join(file.relative_to(REPO).with_suffix("").parts)
        hits = runner_imports(file.read_text(encoding="utf-8"), module)
        if hits:
            found[file.relative_to(REPO).as_posix()] = hits
    assert found == {}


def test_the_check_sees_every_form_of_import() -> None:
    planted = {
        "from biorab.runner.executors import ExecutionRequest\n": [(1, "biorab.runner.executors")],
        "import biorab.runner.store.shards as s\n": [(1, "biorab.runner.store.shards")],
        "from biorab import runner\n": [(1, "biorab.runner")],
        "def f():\n    from biorab.runner.executors.local import run_local\n": [
            (2, "biorab.runner.executors.local")],
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from biorab.runner import run\n": [
            (3, "biorab.runner")],
    }
    for source, expected in planted.items():
        assert set(expected) <= set(runner_imports(source, "pipelines.x")), source
    # a relative import from inside the library is resolved to the runner
    assert (1, "biorab.runner") in runner_imports("from ..runner import run\n", "biorab.ral.x")
    assert runner_imports("from biorab.ral import Pipeline\nimport biorab.execution\n", "pipelines.x") == []
