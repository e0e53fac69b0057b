"""Checking the main job's config on the driver loads no model stack: `biorab run` validates (and computes
the tracked model digest) in the driver, which never generates, and torch + transformers cost it seconds
of CPU before Ray even starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def test_smoke_config_validates_without_torch_or_transformers() -> None:
    code = (
        "import sys\n"
        "from biorab.runner.checks.validate import load_experiment\n"
        "from biorab.tracking.experiment import model_digest\n"
        "cfg = load_experiment('jobs/smoke.yaml', check_data=False)\n"
        "assert cfg.backend.name == 'transformers' and cfg.backend.params['batch_size'] == 16\n"
        "assert model_digest(cfg)\n"
        "heavy = ('torch', 'transformers', 'biorab.generation.hf.backend')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_a_bad_transformers_param_is_still_refused_with_its_key(tmp_path: Path) -> None:
    import pytest

    from biorab.common.errors import ConfigError
    from biorab.runner.checks.validate import load_experiment

    text = (REPO / "jobs" / "smoke.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("batch_size: 16, num_threads: 2", "batch_size: 0, num_threads: 2"), "utf-8")
    with pytest.raises(ConfigError, match=r"backend\.params\.batch_size"):
        load_experiment(bad, check_data=False)
