"""The config module names no experiment kind's or trainer's types: the ``drugmech:`` block and a retrieval
entry's ``filter:`` are models their plug-ins register (`biorab.common.registry.CONFIG_SECTIONS`). Every job
in
jobs/ loads to the same config and the same cells as when the config imported those models, and a bad block
fails with the same message (both pinned from main before the change; rewrite the pin with
``python -m tests.unit.test_config_sections`` only in a commit that means to change a job)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from biorab.common.config_loading import load_config
from biorab.common.errors import ConfigError
from biorab.experiment import ExperimentConfig

REPO = Path(__file__).resolve().parents[2]
PIN = REPO / "tests" / "data" / "config" / "jobs_loaded.json"


def _digest(model: Any) -> str:
    return hashlib.sha256(model.model_dump_json().encode()).hexdigest()[:16]


def loaded(path: Path) -> dict[str, Any]:
    """What `path` loads to with the first loader that takes it: a run (validated as `biorab run` does,
    without the data), a sweep, or a tune job; the digest of the validated config, and a run's cell ids."""
    from biorab.runner.checks.validate import load_experiment
    from biorab.sweep.config import load_sweep
    from training.config import load_tune_config

    errors = {}
    for kind, load in (("run", lambda p: load_experiment(p, check_data=False)), ("sweep", load_sweep),
                       ("tune", load_tune_config)):
        try:
            config = load(path)
        except ConfigError as e:
            errors[kind] = str(e)
            continue
        found: dict[str, Any] = {"kind": kind, "digest": _digest(config)}
        if kind == "run":
            found["cells"] = [cell.cell_id for cell in config.cells()]
        return found
    return {"kind": None, "errors": errors}


def all_jobs() -> dict[str, dict[str, Any]]:
    return {path.name: loaded(path) for path in sorted((REPO / "jobs").glob("*.yaml"))}


def test_every_job_loads_to_the_pinned_config_and_cells() -> None:
    pinned = json.loads(PIN.read_text(encoding="utf-8"))
    assert len(pinned) == 22 and {v["kind"] for v in pinned.values()} == {"run", "sweep", "tune"}
    assert all_jobs() == pinned


BASE = "name: demo\nbackend: {name: fake}\n"
DATASET = "datasets: [{name: ade_corpus_v2, limit: 2}]\n"
LABELED = "retrieval: [{testbed: labeled, filter: %s}]\n"
ERRORS = {  # pinned from main, where the config module imported DrugMechSpec and HitFilterSpec
    BASE: "key 'drugmech': Value error, a config needs 'datasets' (BioRAB cells), 'drugmech' (DrugMech query "
          "files), or both",
    BASE + "drugmech: {query_files: []}\n":
        "key 'drugmech.query_files': Tuple should have at least 1 item after validation, not 0",
    BASE + "drugmech: {query_files: [a, a]}\n":
        "key 'drugmech.query_files': Value error, repeated entries: a",
    BASE + "drugmech: {query_files: [a], worlds: [mars]}\n":
        "key 'drugmech.worlds.0': Input should be 'open' or 'closed' (and 1 more problem(s))",
    BASE + "drugmech: {query_files: [a], bogus: 1}\n": "key 'drugmech.bogus': unknown key",
    BASE + "drugmech: some text\n":
        "key 'drugmech': Input should be a valid dictionary or instance of DrugMechSpec",
    DATASET + BASE + "drugmech: {query_files: [a], runs: 0}\n":
        "key 'drugmech.runs': Input should be greater than or equal to 1",
    BASE + DATASET + LABELED % "{threshold: 1}": "key 'retrieval.0.filter.encoder': Field required",
    BASE + DATASET + LABELED % "{encoder: x, threshold: -1}":
        "key 'retrieval.0.filter.threshold': Input should be greater than 0",
    BASE + DATASET + LABELED % "{encoder: x, extra: 1}": "key 'retrieval.0.filter.extra': unknown key",
    BASE + DATASET + LABELED % "x":
        "key 'retrieval.0.filter': Input should be a valid dictionary or instance of HitFilterSpec",
}


@pytest.mark.parametrize("text", list(ERRORS), ids=range(len(ERRORS)))
def test_a_bad_block_fails_with_the_message_it_had(tmp_path: Path, text: str) -> None:
    path = tmp_path / "cfg.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(ExperimentConfig, path)
    assert str(error.value) == f"{path}, {ERRORS[text]}"


def test_the_blocks_are_the_plug_ins_models(tmp_path: Path) -> None:
    from biorab.drugmech.experiment.spec import DrugMechSpec
    from biorab.learn.hit_filter import HitFilterSpec

    path = tmp_path / "cfg.yaml"
    path.write_text("name: dm\nbackend: {name: transformers, params: {model: smollm2}}\n"
                    "drugmech: {query_files: [a]}\n", encoding="utf-8")
    config = load_config(ExperimentConfig, path)
    # The block's own hook ran: a DrugMech-only config asks a chat backend for chat prompts.
    assert type(config.drugmech) is DrugMechSpec
    assert config.backend.params == {"model": "smollm2", "chat": True}
    path.write_text(BASE + DATASET + LABELED % "{encoder: x, threshold: 1.5}", encoding="utf-8")
    config = load_config(ExperimentConfig, path)
    assert config.retrieval[0].filter == HitFilterSpec(encoder="x", threshold=1.5)
    assert [c.cell_id for c in config.cells()] == ["ade_corpus_v2-test__labeled-bm25-k1__36b5a3b5ff"]


if __name__ == "__main__":
    PIN.write_text(json.dumps(all_jobs(), indent=1) + "\n", encoding="utf-8")
