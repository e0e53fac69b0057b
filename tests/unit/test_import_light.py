"""Importing any library package (and the CLI module), or any library module but the engines, must not import
the heavy stack: this keeps the CLI fast and lets the library run where Ray, torch or vLLM are absent. The
static rules (`tests/support/import_rules.py`: `HEAVY_STACK`, `ENGINES`) say why; this proves it by
importing."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.import_rules import ENGINES, HEAVY_STACK, repo_modules

REPO = Path(__file__).resolve().parents[2]


def library_packages() -> list[str]:
    """Every package (not module) of biorab and pipelines, found on disk so a new one is covered."""
    names = []
    for top in ("biorab", "pipelines"):
        names.append(top)
        names += [m.name for m in pkgutil.walk_packages([str(REPO / top)], prefix=f"{top}.") if m.ispkg]
    return sorted(names)


def light_modules() -> list[str]:
    """Every module of biorab and pipelines but the engine modules (built on a heavy library)."""
    layers = ("biorab", "pipelines")
    return sorted(m for m in repo_modules() if m.split(".")[0] in layers and m not in ENGINES)


def test_every_package_is_found() -> None:
    found = library_packages()
    assert {"biorab.drugmech.prompts", "biorab.runner", "biorab.ral", "pipelines"} <= set(found)
    assert {"biorab.retrieval.dense", "pipelines.ray_executor"} <= set(light_modules())
    assert "biorab.generation.hf.backend" not in light_modules()


@pytest.mark.parametrize(
    "statement",
    [
        "import biorab",
        "import biorab.common.registry, biorab.common.records, biorab.common.build, "
        "biorab.common.config_loading, "
        "biorab.ral.specs.cell_records",
        "import biorab.cli.main",
        "import " + ", ".join(library_packages()),
        "import " + ", ".join(light_modules()),
    ],
    ids=["biorab", "neutral-modules", "cli", "every-package", "every-module-but-engines"],
)
def test_light_import(statement: str) -> None:
    code = f"{statement}\nimport sys\nprint(','.join(m for m in {HEAVY_STACK!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == ""
