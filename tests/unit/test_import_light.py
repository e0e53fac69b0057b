"""Importing any library package (and the CLI module) must not import the heavy stack: this keeps the CLI
fast and lets the library run where Ray, torch or vLLM are absent."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("ray", "torch", "vllm", "mlflow", "faiss", "transformers", "sentence_transformers", "bm25s", "peft")
REPO = Path(__file__).resolve().parents[2]


def library_packages() -> list[str]:
    """Every package (not module) of biorab and pipelines, found on disk so a new one is covered."""
    names = []
    for top in ("biorab", "pipelines"):
        names.append(top)
        names += [m.name for m in pkgutil.walk_packages([str(REPO / top)], prefix=f"{top}.") if m.ispkg]
    return sorted(names)


def test_every_package_is_found() -> None:
    found = library_packages()
    assert {"biorab.drugmech.prompts", "biorab.runner", "biorab.ral", "pipelines"} <= set(found)


@pytest.mark.parametrize(
    "statement",
    [
        "import biorab",
        "import biorab.registry, biorab.records, biorab.build, biorab.config_loading, biorab.cells",
        "import biorab.cli.main",
        "import " + ", ".join(library_packages()),
    ],
)
def test_light_import(statement: str) -> None:
    code = f"{statement}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""
