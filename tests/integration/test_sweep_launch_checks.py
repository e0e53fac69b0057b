"""A grid with a model and an encoder that cannot load here, a missing data file, a template that does not
fit its task and actor pools that do not fit the local Ray is refused before launch, every problem named,
exit 2: by `biorab validate` and by `biorab sweep` (nothing written, no Ray, no traceback). The checks are
`biorab.runner.checks.launch`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def write_broken_sweep(tmp_path: Path, data_dir: Path) -> tuple[Path, Path]:
    data = tmp_path / "data"
    shutil.copytree(data_dir, data)
    missing = data / "git" / "renew_triplet_T_test.jsonl"  # GIT's test split
    missing.unlink()
    sweep = {
        "name": "broken",
        "output_dir": str(tmp_path / "runs"),
        "data_dir": str(data),
        "models": {"nowhere": {"backend": "vllm", "model": "nobody/no-such-model", "size_b": 1}},
        "retrievers": {"enc": {"retriever": "dense", "params": {"model": "nobody/no-such-encoder"}},
                       "legacy": {"retriever": "none", "template": "legacy"}},  # no `legacy` for MedMCQA
        "matrix": {"models": ["nowhere"], "datasets": ["medmcqa", "git"], "retrievers": ["enc", "legacy"]},
        "resources": {"num_cpus": 2, "llm": {"pool_size": 4, "num_cpus": 4, "num_gpus": 1}},  # no fit here
        "tracking": {"enabled": False},
    }
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    return path, missing


def biorab(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": "/nonexistent-hf-home"}  # an empty HF cache
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_every_problem_named_before_launch(tmp_path: Path, data_dir: Path) -> None:
    path, missing = write_broken_sweep(tmp_path, data_dir)
    for command in (["validate", str(path)], ["sweep", str(path)]):
        done = biorab(*command)
        assert done.returncode == 2, done.stderr[-3000:]
        err = done.stderr
        assert "Traceback" not in err
        assert "5 problem(s) found before launch, nothing was started" in err, err
        assert "models.nowhere: model 'nobody/no-such-model' is no local folder and not in the Hugging " \
               "Face cache, and the hub is unreachable (HF_HUB_OFFLINE is set)" in err
        assert "retriever dense: encoder 'nobody/no-such-encoder' is no local folder" in err
        assert f"data file {missing} not found (git test split)" in err
        assert "template 'legacy' does not fit dataset 'medmcqa'" in err
        # pools that do not fit the local Ray: listed with the rest, not a stop of the sweep's expansion
        assert "resources: the actor pools need 16.5 CPUs and 4 GPUs" in err
    assert not (tmp_path / "runs").exists()  # refused before anything was written


def test_a_fitting_grid_is_listed(tmp_path: Path, data_dir: Path) -> None:
    sweep = {"name": "ok", "output_dir": str(tmp_path / "runs"),
             "models": {"f": {"backend": "fake", "params": {"mode": "constraint"}}},
             "matrix": {"models": ["f"], "datasets": ["medmcqa", "git"], "retrievers": ["none", "bm25"]},
             "tracking": {"enabled": False}}
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(sweep), encoding="utf-8")
    done = biorab("validate", str(path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith(f"ok: {path} defines 4 cell(s) in 1 run(s)")


def test_pools_that_do_not_fit_the_local_ray(tmp_path: Path) -> None:
    from biorab.experiment import ResourcesConfig
    from biorab.runner.checks.launch import Capacity, needed, resource_problems

    paper = ResourcesConfig.model_validate({"retrieval": {"pool_size": 2, "num_cpus": 1},
                                            "llm": {"pool_size": 4, "num_cpus": 4, "num_gpus": 1},
                                            "task_num_cpus": 0.5})
    assert needed(paper) == (2 * 1 + 4 * 4 + 0.5, 4.0)
    found = resource_problems([paper], Capacity(2, 0, "the local Ray"))
    assert len(found) == 1 and found[0].startswith("resources: the actor pools need 18.5 CPUs and 4 GPUs")
    assert resource_problems([ResourcesConfig()], Capacity(2, 0, "the local Ray")) == []  # 1.5 CPUs fit
