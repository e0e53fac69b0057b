"""What `biorab run` fetches for a DrugMech config on a machine without data: the release and DrugMechDB,
with no mirror needed (DrugMechDB's indication_paths.yaml is rebuilt from its public upstream files), again
after an interrupted fetch, and never into a folder the user named."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.config_loading import load_config
from biorab.experiment import ExperimentConfig
from biorab.fetching import load_manifest
from biorab.runner.checks.fetch_needs import names_to_fetch
from tests.support.bare_machine import bare_machine as make_bare_machine

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def fetched_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No data beside the checkout, no overrides, no mirror; returns the fetched-data default (empty)."""
    return make_bare_machine(tmp_path, monkeypatch)


def drugmech_smoke() -> ExperimentConfig:
    return load_config(ExperimentConfig, REPO / "jobs" / "drugmech_smoke.yaml")


def test_a_drugmech_config_fetches_drugmechdb_without_a_mirror(fetched_default: Path) -> None:
    assert names_to_fetch(drugmech_smoke()) == ["drugmechcf", "drugmechdb"]


def test_an_interrupted_fetch_is_fetched_again_and_a_complete_one_is_not(fetched_default: Path) -> None:
    for f in load_manifest().select(("drugmechcf",)):
        (fetched_default / f.path).parent.mkdir(parents=True, exist_ok=True)
        (fetched_default / f.path).write_text("x")
    db = fetched_default / "drugmechdb"
    (db / "indication_paths.yaml.parts").mkdir(parents=True)  # a fetch stopped half-way
    (db / "deprecated_ids.txt").write_text("x")
    assert names_to_fetch(drugmech_smoke()) == ["drugmechdb"]
    (db / "indication_paths.yaml").write_text("x")
    assert names_to_fetch(drugmech_smoke()) == []


def test_a_named_drugmechdb_folder_is_never_fetched_into(
    fetched_default: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "mine").mkdir()
    monkeypatch.setenv("BIORAB_DRUGMECHDB_DIR", str(tmp_path / "mine"))
    assert names_to_fetch(drugmech_smoke()) == ["drugmechcf"]
