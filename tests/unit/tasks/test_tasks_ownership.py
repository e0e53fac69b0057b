"""A task has one owner: outside the tests, the triple task's name is written only by its own module, the
registry line that registers it and the template catalog (the staged datasets' templates)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
OWNERS = {"biorab/tasks/triples.py", "biorab/common/registry.py", "biorab/tasks/template_catalog.py"}


def test_the_triple_task_name_is_written_in_three_modules_only() -> None:
    found = {
        path.relative_to(REPO).as_posix()
        for layer in ("biorab", "pipelines", "serve", "training")
        for path in (REPO / layer).rglob("*.py")
        if "triple_extraction" in path.read_text(encoding="utf-8")
    }
    assert found == OWNERS
