"""`import biorab` (and the CLI module) must not import the heavy stack: this keeps the CLI fast and lets
the library run where Ray, torch or vLLM are absent."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("ray", "torch", "vllm", "mlflow", "faiss", "transformers", "sentence_transformers", "bm25s", "peft")


@pytest.mark.parametrize(
    "statement",
    [
        "import biorab",
        "import biorab.registry, biorab.records, biorab.build, biorab.config_loading",
        "import biorab.cli.main",
    ],
)
def test_light_import(statement: str) -> None:
    code = f"{statement}\nimport sys\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
