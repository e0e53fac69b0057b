"""DrugMech query files as cells of `biorab run` (in-process, fake backend): exact strict/relaxed accuracies,
incomplete answers, per-run seeds in the generation keys, resume without regeneration, MLflow read-back,
config errors naming the key, and the shipped job files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from biorab.common.errors import ConfigError
from biorab.drugmech.experiment.config_checks import check_drugmech
from biorab.drugmech.prompts.render import render_prompt
from biorab.drugmech.queries.query_files import load_release_file
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from biorab.runner.checks.validate import load_experiment
from tests.support.drugmech_runs import REPO, make_config


@pytest.fixture(autouse=True)
def drugmech_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, drugmechdb_dir: Path,
                 drugmechcf_dir: Path) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BIORAB_DRUGMECHDB_DIR", str(drugmechdb_dir))
    monkeypatch.setenv("BIORAB_DRUGMECHCF_DIR", str(drugmechcf_dir))




def by_label(result: Any) -> dict[str, Any]:
    return {c.plan.label: c for c in result.cells}


def test_in_process_run_scores_exactly(tmp_path: Path) -> None:
    result = run_experiment(make_config(tmp_path))
    cells = by_label(result)
    assert list(cells) == [f"dm-{f}__{w}__run{r}" for f in ("change_pos_dpi_r250", "AddLink_neg_dpi_r1k")
                           for w in ("open", "closed") for r in (0, 1)]
    change = cells["dm-change_pos_dpi_r250__closed__run1"]
    assert {k: v["value"] for k, v in change.metrics.items()} == {
        "accuracy_strict": 1 / 4, "accuracy_relaxed": 2 / 4, "accuracy_strict_complete_only": 1 / 3}
    assert (change.n, change.parse_failures, change.generation_failures) == (4, 1, 0)
    assert change.extra["n_incomplete"] == 1
    assert change.extra["usage"]["finish_reasons"] == {"length": 1, "stop": 3}  # tokens and finish reasons
    # The cell is described by its source's own columns, never by dataset/split/retrieval fields.
    assert (change.plan.dataset, change.plan.split, change.plan.retrieval) == (None, None, None)
    described = {k: v for k, v in change.to_json().items() if k not in ("metrics", "predictions", "usage")}
    assert described == {
        "cell_id": change.plan.cell_id, "cell": "dm-change_pos_dpi_r250__closed__run1", "task": "drugmech",
        "query_file": "change_pos_dpi_r250", "query_type": "CHANGE_LINK", "world": "closed", "mode": None,
        "run": 1, "n": 4, "parse_failures": 1, "generation_failures": 0, "incomplete": False,
        "n_incomplete": 1}
    addlink = cells["dm-AddLink_neg_dpi_r1k__open__run0"]
    assert {k: v["value"] for k, v in addlink.metrics.items()} == {
        "accuracy_strict": 3 / 4, "accuracy_strict_complete_only": 3 / 4}
    # 8 cells x 4 rows; the four cells of a file differ in world or in seed, so nothing is shared.
    assert (result.stats.written, result.stats.generated, result.stats.generation_failures) == (32, 32, 0)

    rows = pq.read_table(change.predictions_path).to_pylist()
    assert [r["pred_ok"] for r in rows] == [True, False, False, False]
    assert [r["pred_label"] for r in rows] == ["Contra-indicated", "Partially Blocked", None, None]
    assert json.loads(rows[3]["pred_scores"])["incomplete"] is True
    assert rows[3]["gen_finish_reason"] == "length"
    qfile = load_release_file("change_pos_dpi_r250")
    from biorab.drugmech.graph.drugmechdb import load_drugmechdb

    assert rows[0]["prompt"] == render_prompt(qfile.queries[0], world="closed", moas=load_drugmechdb())
    # Runs differ only in the sampling seed (config seed + run), which is part of the generation key.
    run0 = pq.read_table(cells["dm-change_pos_dpi_r250__closed__run0"].predictions_path).to_pylist()
    assert [r["prompt"] for r in run0] == [r["prompt"] for r in rows]
    assert not {r["gen_key"] for r in run0} & {r["gen_key"] for r in rows}

    summary = json.loads((result.run_dir / "summary.json").read_text())
    report = summary["drugmech"]
    assert report == result.sections["drugmech"]
    assert (report["parser"], report["matcher"]) == ("robust", "tfidf")
    assert (report["n"], report["n_unparsed"], report["n_incomplete"]) == (32, 4, 4)
    file_cells = {(c["query_file"], c["world"]): c for c in report["cells"]}
    cell = file_cells[("change_pos_dpi_r250", "open")]
    assert (cell["runs"], cell["n"]) == (2, 8)
    assert cell["accuracy_strict"]["mean"] == 0.25 and cell["accuracy_strict"]["ci_low"] == 0.25
    groups = {g["group"]: g for g in report["groups"]}
    # First run of each cell; a Delete/Invert stratum counts 4 times beside Add-Link: (4*4 + 4) per world.
    assert groups["All open world"]["n"] == 20
    assert groups["All open world"]["mean"] == pytest.approx((4 * 1 + 3) / 20, abs=0.02)
    assert "## DrugMech" in result.report_path.read_text()


def test_resume_generates_nothing_and_a_larger_limit_only_the_new_rows(tmp_path: Path) -> None:
    first = run_experiment(make_config(tmp_path))
    again = run_experiment(make_config(tmp_path))
    assert again.total_pending == 0 and again.stats.written == 0 and again.stats.generated == 0
    assert [c.metrics for c in again.cells] == [c.metrics for c in first.cells]
    fresh = run_experiment(make_config(tmp_path), resume=False)
    assert (fresh.stats.generated, fresh.stats.generation_cache_hits) == (0, 32)
    more = run_experiment(make_config(tmp_path, limit=5))
    assert more.total_pending == 8 and more.stats.generated == 8  # row 4 of each of the 8 cells
    assert [c.plan.cell_id for c in more.cells] == [c.plan.cell_id for c in first.cells]
    # Computed on main (92c98f6) before DrugMech plans stopped storing the file stem and world in
    # dataset/split: cell ids, and so existing cells dirs and resume, are unchanged.
    assert [c.plan.cell_id.rsplit("__", 1)[1] for c in first.cells] == [
        "1e4fedb413", "26943dd18a", "906e1e1873", "83cab69777",
        "383d7839a5", "ad393b0f90", "7623360eec", "b25c521c1b"]


def test_failed_generations_are_incomplete_and_retried(tmp_path: Path) -> None:
    failing = run_experiment(make_config(tmp_path, fail_ids=("AddLink_neg_dpi_r1k/0",)))
    cell = by_label(failing)["dm-AddLink_neg_dpi_r1k__open__run0"]
    assert cell.generation_failures == 1 and cell.extra["n_incomplete"] == 1
    assert cell.metrics["accuracy_strict"]["value"] == 2 / 4
    assert failing.stats.generation_failures == 4  # row 0 of the 4 AddLink cells


@pytest.mark.slow
def test_mlflow_read_back_of_a_drugmech_cell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the run dir's own store
    result = run_experiment(make_config(tmp_path, tracking=True))
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=result.tracking_uri)
    experiment = client.get_experiment_by_name("dm")
    assert experiment is not None
    everything = client.search_runs([experiment.experiment_id])
    (parent,) = [r for r in everything if "mlflow.parentRunId" not in r.data.tags]
    runs = {r.info.run_name: r for r in everything if "mlflow.parentRunId" in r.data.tags}
    assert len(runs) == 8
    run = runs["fake/dm-change_pos_dpi_r250__open__run1"]
    assert {k: run.data.tags[k] for k in ("query_file", "world", "mode", "run", "backend", "task")} == {
        "query_file": "change_pos_dpi_r250", "world": "open", "mode": "", "run": "1", "backend": "fake",
        "task": "drugmech"}
    assert not {"dataset", "split", "testbed", "method"} & (set(run.data.tags) | set(run.data.params))
    assert run.data.metrics == {"rows_written": 4.0, "n": 4.0, "parse_failures": 1.0,
                                "generation_failures": 0.0, "n_incomplete": 1.0, "accuracy_strict": 0.25,
                                "accuracy_relaxed": 0.5,
                                "accuracy_strict_complete_only": pytest.approx(1 / 3),
                                # the fake backend's word counts; one answer cut at `length`
                                "prompt_tokens": 1289.0, "completion_tokens": 238.0, "reasoning_tokens": 0.0,
                                "not_stopped": 1.0}
    assert parent.data.params["drugmech.query_files.1"] == "AddLink_neg_dpi_r1k"  # the shared config
    assert parent.data.params["drugmech.runs"] == "2"
    assert (run.data.params["query_file"], run.data.params["world"], run.data.params["run"]) == (
        "change_pos_dpi_r250", "open", "1")
    (pred,) = client.list_artifacts(run.info.run_id, "predictions")
    cell_id = by_label(result)["dm-change_pos_dpi_r250__open__run1"].plan.cell_id
    assert pred.path == f"predictions/{cell_id}.parquet"


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "job.yaml"
    backend = "" if "backend:" in body else "backend: {name: fake}\n"
    path.write_text("name: bad\n" + backend + body, encoding="utf-8")
    return path


@pytest.mark.parametrize(("body", "key", "needle"), [
    ("drugmech: {query_files: [change_pos_dpi_r250, nope_r1]}\n", "drugmech.query_files.1",
     "unknown query file"),
    ("drugmech: {query_files: [change_pos_dpi_r250], wrold: [open]}\n", "drugmech.wrold", ""),
    ("drugmech: {query_files: [change_pos_dpi_r250], worlds: [opne]}\n", "drugmech.worlds.0", ""),
    ("drugmech: {query_files: [factuals_neg_r1k], modes: [ANONYMIZED_DISEASE]}\n", "drugmech.primekg",
     "PrimeKG"),
    ("drugmech: {query_files: [change_pos_dpi_r250]}\nresources: {llm_engine: vllm_processor}\n"
     # a DrugMech-only config turns chat on (`with_chat_default`): chat messages the processor cannot send
     "backend: {name: vllm, params: {model: m}}\n", "backend.params.chat",
     "llm_engine vllm_processor cannot send chat messages"),
    ("seed: 1\n", "drugmech", "needs 'datasets'"),
])
def test_config_errors_name_the_key_and_file(tmp_path: Path, body: str, key: str, needle: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(ConfigError) as err:
        load_experiment(path)
    text = str(err.value)
    assert str(path) in text and needle in text
    assert f"key '{key}'" in text


def test_chat_default_for_drugmech_only_configs() -> None:
    cfg = ExperimentConfig.model_validate({"name": "x", "drugmech": {"query_files": ["change_pos_dpi_r250"]},
                                           "backend": {"name": "openai", "params": {"model": "m"}}})
    assert cfg.backend.params == {"model": "m", "chat": True}
    mixed = ExperimentConfig.model_validate({"name": "x", "datasets": [{"name": "ade"}],
                                             "drugmech": {"query_files": ["change_pos_dpi_r250"]}})
    assert mixed.backend.params == {}
    off = ExperimentConfig.model_validate({"name": "x", "drugmech": {"query_files": ["change_pos_dpi_r250"]},
                                           "backend": {"name": "transformers", "params": {"chat": False}}})
    assert off.backend.params == {"chat": False}


@pytest.mark.parametrize(("job", "cells"), [("drugmech_smoke.yaml", 2),
                                            ("drugmech_paper.yaml", 12 * 2 * 5 + (3 + 1) * 5)])
def test_shipped_jobs_validate(job: str, cells: int) -> None:
    from biorab.drugmech.experiment.cell_slices import drugmech_cells

    cfg = load_experiment(REPO / "jobs" / job)
    assert len(drugmech_cells(cfg)) == cells


def test_paper_job_runs_the_factual_positives_in_every_disease_mode_without_primekg() -> None:
    """The paper reports the factual test in three disease modes; the positives need no PrimeKG (DrugMechDB
    describes their diseases), the negatives outside NAMED_DISEASE do: `negative_modes` keeps those to
    NAMED_DISEASE, and the job validates with no `primekg`."""
    from biorab.drugmech.experiment.cell_slices import drugmech_cells

    cfg = load_experiment(REPO / "jobs" / "drugmech_paper.yaml")
    assert cfg.drugmech is not None and cfg.drugmech.primekg is None
    factual = {(loaded.stem, plan.info.mode) for loaded, plan in drugmech_cells(cfg)  # type: ignore[union-attr]
               if loaded.stem.startswith("factuals")}
    assert factual == {("factuals_pos_r1k", "ANONYMIZED_DISEASE"), ("factuals_pos_r1k", "NAMED_DISEASE"),
                       ("factuals_pos_r1k", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"),
                       ("factuals_neg_r1k", "NAMED_DISEASE")}
    # the same modes for the negatives too would need PrimeKG: refused, naming the key
    data = yaml.safe_load((REPO / "jobs" / "drugmech_paper.yaml").read_text(encoding="utf-8"))
    del data["drugmech"]["negative_modes"]
    with pytest.raises(ConfigError, match="factual negatives outside NAMED_DISEASE"):
        check_drugmech(ExperimentConfig.model_validate(data))


def test_biorab_run_cli_prints_the_drugmech_table(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    cfg = make_config(tmp_path).model_dump(mode="json")
    path = tmp_path / "dm.yaml"
    path.write_text(json.dumps(cfg), encoding="utf-8")  # JSON is YAML
    done = subprocess.run([sys.executable, "-c", "from biorab.cli.main import main; main()", "run", str(path),
                           "--no-ray"], capture_output=True, text=True, env=dict(os.environ), cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "DrugMech (parser robust, matcher tfidf)" in done.stdout
    lines = [ln.split() for ln in done.stdout.splitlines() if ln.startswith("  change_pos_dpi_r250")]
    assert [ln[1:5] for ln in lines] == [["open", "runs=2", "n=8", "strict=0.250"],
                                         ["closed", "runs=2", "n=8", "strict=0.250"]]


def test_validate_lists_biorab_and_drugmech_cells_in_one_list(tmp_path: Path, data_dir: Path) -> None:
    import os
    import subprocess
    import sys

    cfg = make_config(tmp_path).model_dump(mode="json")
    cfg.update(datasets=[{"name": "semclass", "limit": 3}], data_dir=str(data_dir))
    path = tmp_path / "mixed.yaml"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "biorab.cli.main", "validate", str(path)],
                          capture_output=True, text=True, cwd=REPO, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    head, *cells = done.stdout.strip().splitlines()
    # 1 BioRAB cell (semclass × none), then 2 files × 2 worlds × 2 runs DrugMech cells, one list.
    assert head.startswith(f"ok: {path} defines 9 cell(s)")
    assert [c.split("__")[0].strip() for c in cells] == ["semclass-test"] + ["dm-change_pos_dpi_r250"] * 4 \
        + ["dm-AddLink_neg_dpi_r1k"] * 4
    assert cells[0].endswith("(limit 3)") and cells[1].endswith("(limit 4)")
