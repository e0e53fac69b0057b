"""The README's first lines are the install, main-job and test commands, and `.ci/run` runs exactly the
README's install and test commands (so "CI runs the same" cannot drift)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block is not None and text.index("```bash") < 20, "the README must open with its commands"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def test_readme_opens_with_install_main_job_and_test_commands() -> None:
    install, main_job, tests = _readme_commands()
    assert install == "bash install.sh"
    assert main_job == ".venv/bin/biorab run jobs/smoke.yaml"
    assert (ROOT / "jobs" / "smoke.yaml").is_file()
    assert tests == ".venv/bin/python -m pytest -q"


def test_ci_installs_and_tests_exactly_as_the_readme_says() -> None:
    install, _, tests = _readme_commands()
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = [line for line in ci if line and not line.startswith("#")]
    assert "rm -rf .venv" in commands, "CI must start from a fresh virtual environment"
    assert commands.index("rm -rf .venv") < commands.index(install)
    assert commands[-1] == tests
