"""`biorab plan` as a user calls it: JSON fields, every config error of every run before launch, and the
cells it lists (a run config's always, a sweep's with --cells)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import yaml

from tests.support.cli_runs import REPO, biorab

DISEASE_MODES = ("ANONYMIZED_DISEASE", "NAMED_DISEASE", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS")


def plan(path: Path, cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return biorab("plan", str(path), *args, cache=cache)


def listed_cells(stdout: str) -> dict[str, str]:
    """Cell id → its listed rows and tokens, from the lines under ``cells of run ...``."""
    return dict(line.split(None, 1) for line in stdout.splitlines()
                if line.startswith("  ") and "rows" in line)


def sweep_file(tmp_path: Path, data_dir: Path, datasets: list[str]) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({
        "name": "s", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": {"a": {"backend": "fake"}, "b": {"backend": "fake", "params": {"seed": 1}}},
        "matrix": {"models": ["a", "b"], "datasets": [{"name": d, "limit": 3} for d in datasets],
                   "retrievers": ["none"]},
    }), encoding="utf-8")
    return path


def test_plan_json(tmp_path: Path, data_dir: Path) -> None:
    out = plan(sweep_file(tmp_path, data_dir, ["semclass", "medmcqa"]), tmp_path / "cache", "--json")
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    counts = (got["cells"], got["runs"], got["unique_generation_keys"], got["new_generations"])
    assert counts == (4, 2, 12, 12)
    assert got["estimated_prompts"] == 0 and got["gpu_hours"] == 0.0 and got["errors"] == []
    assert "cell_estimates" not in got  # the cells are listed only when asked


def test_plan_lists_every_config_error(tmp_path: Path, data_dir: Path) -> None:
    out = plan(sweep_file(tmp_path, data_dir, ["semclas"]), tmp_path / "cache")
    assert out.returncode == 2
    # one error per run (both models' runs name the dataset), then the summary naming the file
    text = " ".join(out.stdout.split())  # the console wraps long lines
    assert text.count("key 'datasets.0.name'") == 2 and "Did you mean 'semclass'" in text
    assert "2 config error(s) found before launch" in out.stderr and "s.yaml" in out.stderr


def test_plan_cells_lists_a_sweeps_cells_and_keeps_its_plan(tmp_path: Path, data_dir: Path) -> None:
    path, cache = sweep_file(tmp_path, data_dir, ["semclass", "medmcqa"]), tmp_path / "cache"
    plain, listing = plan(path, cache), plan(path, cache, "--cells")
    assert plain.returncode == 0 and listing.returncode == 0, plain.stderr + listing.stderr
    assert "cells of run" not in plain.stdout and not listed_cells(plain.stdout)
    table, _, cells = listing.stdout.partition("cells of run ")

    def same(text: str) -> str:  # the plan's own time and the title's centring around it differ per call
        return " ".join(re.sub(r"planned in [0-9.]+ s", "", text).split())

    assert same(table) == same(plain.stdout)
    assert cells.startswith("a (model a): 2") and "cells of run b (model b): 2" in cells
    listed = listed_cells(listing.stdout)
    assert sorted(c.split("__", 1)[0] for c in listed) == ["medmcqa-test", "medmcqa-test", "semclass-test",
                                                           "semclass-test"]
    assert all(v.startswith("3 rows, ~") for v in listed.values())  # limit 3, zero-shot: exact prompts
    # the cells' tokens are the model's: no prompt repeats across these cells, so nothing is deduped
    got = json.loads(plan(path, cache, "--json", "--cells").stdout)
    for model in got["models"]:
        mine = [c for c in got["cell_estimates"] if c["model"] == model["model"]]
        assert sum(c["rows"] for c in mine) == model["unique_generation_keys"] == 6
        assert sum(c["prompt_tokens"] for c in mine) == model["prompt_tokens"] > 0
    assert {c["cell"] for c in got["cell_estimates"]} == set(listed)


def test_plan_of_the_drugmech_paper_job_lists_the_factual_positive_cells(tmp_path: Path) -> None:
    """A run config is planned as one run of a sweep, and its cells are listed: the DrugMech paper job runs
    the factual positives in the paper's three disease modes, the negatives in NAMED_DISEASE only."""
    job, cache = REPO / "jobs" / "drugmech_paper.yaml", tmp_path / "cache"
    out = plan(job, cache)
    assert out.returncode == 0, out.stderr
    assert "run drugmech-paper: 140 cells" in out.stdout
    assert "cells of run drugmech-paper (model meta-llama/Meta-Llama-3-8B-Instruct): 140" in out.stdout
    listed = listed_cells(out.stdout)
    factual = sorted(c.rsplit("__", 1)[0] for c in listed if c.startswith("dm-factuals"))
    positives = [f"dm-factuals_pos_r1k__{mode}__run{r}" for mode in DISEASE_MODES for r in range(5)]
    negatives = [f"dm-factuals_neg_r1k__NAMED_DISEASE__run{r}" for r in range(5)]
    assert factual == sorted(positives + negatives)
    # every query file of the test release holds 6 queries; a DrugMech prompt is estimated at 2,400 chars
    assert set(listed.values()) == {"6 rows, 6 prompts estimated, ~3,600 prompt tokens"}
    # the cells `biorab validate` lists, by the same ids
    checked = biorab("validate", str(job), "--skip-tracking", cache=cache)
    assert checked.returncode == 0, checked.stderr
    assert {line.split()[0] for line in checked.stdout.splitlines()[1:]} == set(listed)
