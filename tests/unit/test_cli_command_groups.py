"""Every command group of `biorab` is registered, and one that cannot load fails the CLI with its import
error instead of vanishing from it (issue 36: the CLI used to skip a group whose module was missing)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import typer

from biorab.cli.main import COMMAND_MODULES, LOAD_ERRORS, app
from biorab.cli.support import exit_codes

REPO = Path(__file__).resolve().parents[2]

#: Each command group's module and the top-level commands it registers.
GROUPS = {
    "data": {"data"}, "score": {"score", "compare"}, "retrieve": {"retrieve", "corpus"}, "models": {"models"},
    "run": {"run"}, "components": {"ls", "validate"}, "drugmech": {"drugmech"}, "serve": {"serve"},
    "tune": {"tune", "tune-compare"}, "sweep": {"sweep", "plan", "report", "track"},
    "explore": {"explore"}, "replay": {"replay"},
}


def commands_by_module() -> dict[str, list[str]]:
    """Each group module's top-level commands, registered on a fresh app of its own, in a subprocess:
    registering a module twice in this process would change the shared sub-apps the CLI tests walk."""
    code = textwrap.dedent("""
        import importlib, json, typer
        from biorab.cli.main import COMMAND_MODULES
        out = {}
        for name in COMMAND_MODULES:
            sub = typer.Typer()
            importlib.import_module(f"biorab.cli.{name}").register(sub)
            sub.command("_placeholder")(lambda: None)  # a Typer with one command would collapse into it
            out[name] = sorted(set(typer.main.get_command(sub).commands) - {"_placeholder"})
        print(json.dumps(out))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_every_command_group_is_registered() -> None:
    assert LOAD_ERRORS == {}
    modules = {p.stem for p in (REPO / "biorab" / "cli").glob("*.py") if "\ndef register(" in p.read_text()}
    assert set(COMMAND_MODULES) == modules == set(GROUPS)  # a new group module must be listed
    registered = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert commands_by_module() == {name: sorted(names) for name, names in GROUPS.items()}
    assert registered == set().union(*GROUPS.values())


def run_broken(name: str, error: str) -> subprocess.CompletedProcess[str]:
    """`biorab --help` in a Python where importing ``biorab.cli.<name>`` raises `error`."""
    code = textwrap.dedent(f"""
        import sys
        class Broken:
            def find_spec(self, fullname, path=None, target=None):
                if fullname == "biorab.cli.{name}":
                    raise {error}
        sys.meta_path.insert(0, Broken())
        sys.argv = ["biorab", "--help"]
        from biorab.cli.main import main
        main()
    """)
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_a_group_that_cannot_load_fails_the_cli_with_its_import_error() -> None:
    out = run_broken("tune", "ModuleNotFoundError(\"No module named 'optuna'\", name='optuna')")
    assert out.returncode == exit_codes.BROKEN_INSTALL, out.stderr
    assert out.stderr.strip() == ("error: the command group in biorab.cli.tune cannot load: "
                                  "ModuleNotFoundError: No module named 'optuna'; the install is broken "
                                  "(reinstall with install.sh)")
    assert "Traceback" not in out.stderr and "Usage" not in out.stdout
    # the module file itself missing (what the CLI used to skip) fails the same way
    missing = run_broken("sweep", "ModuleNotFoundError(\"No module named 'biorab.cli.sweep'\", "
                                  "name='biorab.cli.sweep')")
    assert missing.returncode == exit_codes.BROKEN_INSTALL
    assert "biorab.cli.sweep cannot load: ModuleNotFoundError" in missing.stderr
