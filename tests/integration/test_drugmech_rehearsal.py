"""DrugMech sweeps through `biorab sweep --no-ray` on the fixtures: the report's title and each run's first
progress line count every cell the sweep runs, DrugMech cells included (`run_cells`), and a rehearsal's
fake answers DrugMech prompts from their answer options (`biorab.drugmech.parsing.answer_options`), so its
accuracies are neither all 0 nor all 1 and the chain-depth regression is fitted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml

from biorab.drugmech.generate.query_sets import GenerateOptions, generate, write_generated
from biorab.drugmech.graph.drugmechdb import load_drugmechdb
from biorab.drugmech.prompts.texts import EL_OPTIONS
from tests.support.cli_runs import biorab

MODELS = {"gpt-x": {"backend": "openai", "model": "gpt-x", "params": {"chat": True}},
          "small-y": {"backend": "vllm", "model": "nobody/small-y"}}
FIXED = {"backend": "fake", "params": {"mode": "fixed", "answer": "YES."}}


def _sweep(tmp_path: Path, drugmech: dict[str, Any], models: dict[str, Any], **more: Any) -> Path:
    data = {"name": "dm", "output_dir": str(tmp_path / "runs"), "drugmech": drugmech, "models": models,
            "matrix": [{"models": list(models), **more.pop("block", {})}],
            "sampling": {"max_tokens": 4096, "temperature": 1.0, "seed": 42},
            "tracking": {"enabled": False}, "n_boot": 20, **more}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _env(drugmechdb_dir: Path, drugmechcf_dir: Path) -> dict[str, Any]:
    return {"BIORAB_DRUGMECHDB_DIR": str(drugmechdb_dir), "BIORAB_DRUGMECHCF_DIR": str(drugmechcf_dir),
            "HF_HUB_OFFLINE": "1", "MLFLOW_TRACKING_URI": ""}


def test_mixed_sweep_counts_every_cell(tmp_path: Path, data_dir: Path, drugmechdb_dir: Path,
                                       drugmechcf_dir: Path) -> None:
    """BioRAB cells and DrugMech cells in one sweep, counted by hand: per model 2 datasets × 1 retrieval
    setting = 2 BioRAB cells, and (2 counterfactual files × 2 worlds + 1 factual file × 2 modes) × 2 runs
    = 12 DrugMech cells; 14 per model, 28 in the sweep."""
    drugmech = {"query_files": ["delete_pos_ppi_r250", "AddLink_neg_dpi_r1k", "factuals_pos_r1k"],
                "worlds": ["open", "closed"], "modes": ["NAMED_DISEASE", "ANONYMIZED_DISEASE"], "runs": 2,
                "limit": 2, "n_resamples": 50}
    block = {"datasets": [{"name": "semclass", "limit": 2}, {"name": "medmcqa", "limit": 2}],
             "testbeds": ["none"]}
    path = _sweep(tmp_path, drugmech, {"a": FIXED, "b": FIXED}, block=block, data_dir=str(data_dir))
    done = biorab("sweep", str(path), "--no-ray", cache=tmp_path / "cache",
                  **_env(drugmechdb_dir, drugmechcf_dir))
    assert done.returncode == 0, done.stderr[-4000:]
    assert "model a: run a, 14 cells" in done.stderr and "model b: run b, 14 cells" in done.stderr
    assert "sweep dm: 28 cells in 2 runs" in done.stdout
    report = tmp_path / "runs" / "dm" / "report"
    assert (report / "report.md").read_text(encoding="utf-8").startswith("# Sweep dm: 28 cells\n")
    assert "<h1>Sweep dm: 28 cells</h1>" in (report / "report.html").read_text(encoding="utf-8")


def _deep_file(tmp_path: Path, drugmechdb_dir: Path, kind: str) -> Path:
    """20 deep positives generated from the fixture DrugMechDB: their edited links sit at 1 or 2 steps from
    the drug and 3 to 5 from the disease (the released fixtures' at 1 step only, which no fit can
    separate from the intercept)."""
    db = load_drugmechdb(drugmechdb_dir)
    path = tmp_path / f"{kind}.json"
    write_generated(path, generate(kind, db, GenerateOptions(n=20, seed=7, mix="uniform")))
    return path


# The correct options of a Delete/Invert-Link positive (spec §5.4), as the prompt words them: an answer is
# judged here by comparing its text with them, without the parser.
STRICT = {"DELETE_LINK": ["Fully Blocked"], "CHANGE_LINK": ["Contra-indicated", "Fully Blocked"]}


def _said(text: str) -> str:
    """The option an answer drawn from the options gives, by its text (one line of each option suffices)."""
    flat = " ".join(text.split())
    found = [key for key, option in EL_OPTIONS.items() if flat == f"Summary {option}"]
    assert len(found) == 1, text
    return found[0]


def test_rehearsal_answers_drugmech_prompts_right_and_wrong(tmp_path: Path, drugmechdb_dir: Path,
                                                             drugmechcf_dir: Path) -> None:
    deep = [_deep_file(tmp_path, drugmechdb_dir, k) for k in ("delete_pos_ppi", "change_pos_ppi")]
    drugmech = {"query_files": [*map(str, deep), "AddLink_neg_dpi_r1k", "AddLink_pos_ppi_r1k",
                                "factuals_pos_r1k", "factuals_neg_r1k"],
                "worlds": ["open"], "modes": ["NAMED_DISEASE", "ANONYMIZED_DISEASE"],
                "negative_modes": ["NAMED_DISEASE"], "runs": 1, "n_resamples": 50}
    path = _sweep(tmp_path, drugmech, MODELS)
    done = biorab("sweep", str(path), "--rehearse", "--no-ray", "--output-dir", str(tmp_path / "reh"),
                  cache=tmp_path / "cache", **_env(drugmechdb_dir, drugmechcf_dir))
    assert done.returncode == 0, done.stderr[-4000:]
    assert ("replaced answers drugmech of dm: free text (no output constraint) -> the answer options of each "
            "prompt kind (output constraint)") in done.stderr
    # per model: 2 deep files + 2 Add-Link files, open world; factual positives in 2 modes, negatives in 1
    assert "model gpt-x: run gpt-x, 7 cells" in done.stderr and "model small-y: run small-y, 7 cells" in \
        done.stderr
    sweep_dir = tmp_path / "reh" / "dm"
    assert (sweep_dir / "report" / "report.md").read_text(encoding="utf-8").startswith(
        "# Sweep dm: 14 cells\n")

    accuracies, samples = {}, []
    for model in MODELS:
        summary = json.loads((sweep_dir / model / "summary.json").read_text(encoding="utf-8"))
        for cell in summary["cells"]:
            assert cell["parse_failures"] == 0  # every answer parses
            rows = pq.read_table(cell["predictions"]).to_pylist()
            right = [_right(cell, r["gen_text"]) for r in rows]  # judged by the text, not by the parser
            assert [r["pred_ok"] for r in rows] == right
            key = (model, cell["cell"].split("__")[0], cell["world"] or cell["mode"])
            accuracies[key] = sum(right) / len(right)
            assert cell["metrics"]["accuracy_strict"]["value"] == pytest.approx(sum(right) / len(right))
        samples += summary["drugmech"]["chain_depth"]["samples"]
    # the fake draws from the prompt's text alone: both models give the same answers, each cell's pinned
    pinned = {"dm-delete_pos_ppi": 5 / 20, "dm-change_pos_ppi": 11 / 20, "dm-AddLink_neg_dpi_r1k": 2 / 6,
              "dm-AddLink_pos_ppi_r1k": 3 / 6, "dm-factuals_neg_r1k": 4 / 6}
    factual = {"NAMED_DISEASE": 3 / 6, "ANONYMIZED_DISEASE": 1 / 6}
    for (_model, cell, setting), value in accuracies.items():
        assert value == pytest.approx(factual[setting] if cell == "dm-factuals_pos_r1k" else pinned[cell])

    report = (sweep_dir / "report" / "report.md").read_text(encoding="utf-8")
    assert "## DrugMech, pooled over the sweep's models" in report and "all of one class" not in report
    # the pooled fit (each model's first run, the model a covariate), recomputed here by Newton's method
    rows = [(d_drug, d_disease, model == "rehearsal:small-y", correct)
            for model, _q, _r, d_drug, d_disease, correct in samples]
    assert len(rows) == 80 and sum(m for *_, m, _c in rows) == 40
    coef = _logit([[1.0, d, s, float(m)] for d, s, m, _ in rows], [float(c) for *_, c in rows])
    assert _fitted(sweep_dir) == pytest.approx(list(coef), abs=1e-5)
    assert f"| d_drug | {coef[1]:.3f} |" in report and f"| d_disease | {coef[2]:.3f} |" in report
    assert (round(coef[1], 3), round(coef[2], 3)) == (-1.478, -0.619)


def _right(cell: dict[str, Any], text: str) -> bool:
    """Whether an answer drawn from the options is right (spec §5.4), read from its text: the option it
    gives for Delete/Invert, else its first word (YES for a positive, NO for a negative)."""
    if cell["query_type"] in STRICT:
        return _said(text) in STRICT[cell["query_type"]]
    negative = "_neg" in Path(cell["query_file"]).name
    return text.split()[0] == ("NO" if negative else "YES.")


def _logit(x: list[list[float]], y: list[float]) -> np.ndarray:
    """Maximum-likelihood logistic regression by Newton-Raphson (a second computation of statsmodels')."""
    xa, ya = np.array(x), np.array(y)
    beta = np.zeros(xa.shape[1])
    for _ in range(100):
        p = 1 / (1 + np.exp(-xa @ beta))
        step = np.linalg.solve(xa.T @ (xa * (p * (1 - p))[:, None]), xa.T @ (ya - p))
        beta += step
        if np.abs(step).max() < 1e-12:
            break
    return beta


def _fitted(sweep_dir: Path) -> list[float]:
    from biorab.drugmech.scoring.chain_depth import pool_reports
    from biorab.sweep import load_sweep
    from biorab.sweep.collect import chain_depth_sections

    sweep = load_sweep(sweep_dir / "sweep.yaml")
    pooled = pool_reports(chain_depth_sections(sweep), design="paper")
    assert pooled is not None
    fit = pooled["logistic"]
    assert fit["status"] == "ok", fit
    return [c["coef"] for c in fit["coefficients"]]


def test_a_run_loads_drugmechdb_once_for_all_its_cells(tmp_path: Path, drugmechdb_dir: Path,
                                                        drugmechcf_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """YES answers to positives need their reference MoAs: 4 such cells (2 files × 2 runs) and the run's
    chain-depth analysis share one DrugMechDB (the full rehearsal loaded it once per cell: ~1 s each)."""
    from biorab.drugmech.graph import drugmechdb
    from biorab.experiment import ExperimentConfig
    from biorab.runner import run_experiment

    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("BIORAB_DRUGMECHDB_DIR", str(drugmechdb_dir))
    monkeypatch.setenv("BIORAB_DRUGMECHCF_DIR", str(drugmechcf_dir))
    loads: list[object] = []
    real_load = drugmechdb.load_drugmechdb

    def counted(*args: Any, **kwargs: Any) -> Any:
        loads.append(args)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(drugmechdb, "load_drugmechdb", counted)
    config = ExperimentConfig.model_validate({
        "name": "once", "output_dir": str(tmp_path / "runs"), "tracking": {"enabled": False},
        "drugmech": {"query_files": ["AddLink_pos_dpi_r1k", "factuals_pos_r1k"], "worlds": ["open"],
                     "runs": 2, "n_resamples": 50},
        "backend": {"name": "fake", "params": {"mode": "fixed", "answer": "YES."}},
        "sampling": {"max_tokens": 100, "seed": 7}})
    result = run_experiment(config)
    assert [c.metrics["accuracy_strict"]["value"] for c in result.cells] == [1.0] * 4  # every answer YES
    assert len(loads) == 1  # open-world Add-Link and named factual prompts need none to render
