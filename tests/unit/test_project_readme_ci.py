"""The README opens with the two commands (`make run`, `make test`), the Makefile runs the main job and
the test command, only reinstalls when the install inputs changed, and `.ci/run` runs exactly the README's
test command from a fresh virtual environment, failing first when the staged data is missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block is not None and text.index("```bash") < 20, "the README must open with its commands"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]


def _ci_commands() -> list[str]:
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    return [line for line in ci if line and not line.startswith("#")]


def test_readme_opens_with_make_run_and_make_test() -> None:
    assert _readme_commands() == ["make run", "make test"]
    assert (ROOT / "jobs" / "smoke.yaml").is_file()


def test_ci_tests_exactly_as_the_readme_says_from_a_fresh_venv() -> None:
    _, tests = _readme_commands()
    commands = _ci_commands()
    assert "rm -rf .venv" in commands, "CI must start from a fresh virtual environment"
    assert commands.index("rm -rf .venv") < commands.index(tests)
    assert commands[-1] == tests


def _env(**extra: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if not k.startswith("MAKE")}, **extra}


def _make_dry_run(tree: Path, target: str) -> list[str]:
    out = subprocess.run(["make", "-n", target], cwd=tree, capture_output=True, text=True, env=_env(),
                         check=True)
    return [line.strip() for line in out.stdout.splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_installs_only_when_missing_or_changed_then_runs_the_job(tmp_path: Path) -> None:
    for name in ("Makefile", "pyproject.toml", "install.sh"):
        shutil.copy2(ROOT / name, tmp_path / name)
    assert _make_dry_run(tmp_path, "run") == [
        "VENV=.venv bash install.sh", "touch .venv/.biorab-installed", ".venv/bin/biorab run jobs/smoke.yaml"]
    stamp = tmp_path / ".venv" / ".biorab-installed"
    stamp.parent.mkdir()
    stamp.touch()
    assert _make_dry_run(tmp_path, "run") == [".venv/bin/biorab run jobs/smoke.yaml"]
    later = time.time() + 5
    os.utime(tmp_path / "pyproject.toml", (later, later))  # a changed dependency list reinstalls
    assert _make_dry_run(tmp_path, "run")[0] == "VENV=.venv bash install.sh"
    os.utime(stamp, (later + 1, later + 1))
    # `make test` with the data given runs the README's test command (a stand-in python echoes it).
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir()
    python.write_text('#!/bin/sh\necho "ran: python $*"\n')
    python.chmod(0o755)
    env = _env(BIORAB_DATA_DIR=str(tmp_path))
    out = subprocess.run(["make", "test"], cwd=tmp_path, capture_output=True, text=True, env=env, check=True)
    assert out.stdout.splitlines() == [".venv/bin/python -m pytest -q", "ran: python -m pytest -q"]


def test_ci_fails_naming_the_missing_data_before_touching_anything(tmp_path: Path) -> None:
    repo = tmp_path / "checkout" / "repo"  # no ../shared/data beside it
    (repo / ".ci").mkdir(parents=True)
    shutil.copy2(ROOT / ".ci" / "run", repo / ".ci" / "run")
    (repo / ".venv").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "BIORAB_DATA_DIR"}
    result = subprocess.run(["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=env)
    assert result.returncode == 2
    assert result.stderr.startswith("error: the staged data is missing: neither ../shared/data nor "
                                    "$BIORAB_DATA_DIR (unset) exists")
    assert (repo / ".venv").is_dir()  # it failed before the fresh install removed anything


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_test_fetches_the_data_when_none_is_there(tmp_path: Path) -> None:
    tree = tmp_path / "checkout" / "repo"  # no ../shared/data beside it
    tree.mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "install.sh"):
        shutil.copy2(ROOT / name, tree / name)
    bin_dir = tree / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for exe in ("python", "biorab"):  # stand-ins that say how they were called
        (bin_dir / exe).write_text(f'#!/bin/sh\necho "ran: {exe} $* data=$BIORAB_DATA_DIR"\n')
        (bin_dir / exe).chmod(0o755)
    (tree / ".venv" / ".biorab-installed").touch()
    env = {k: v for k, v in _env(XDG_DATA_HOME=str(tmp_path / "xdg")).items() if k != "BIORAB_DATA_DIR"}
    out = subprocess.run(["make", "test"], cwd=tree, capture_output=True, text=True, env=env, check=True)
    fetched = tmp_path / "xdg" / "biorab" / "data"
    assert out.stdout.splitlines() == [
        f"no ../shared/data and no $BIORAB_DATA_DIR: fetching the data into {fetched}",
        "ran: biorab data fetch data=",
        f"ran: python -m pytest -q data={fetched}/biorab"]
