"""The researcher's main job, rehearsed: `biorab sweep jobs/paper.yaml --rehearse --limit 2` (the real file,
every one of its 325 cells, on the fixture data) ends 0 with every substitution named, each run's summary
marked as a rehearsal, every MLflow run FINISHED, the report written and what the real sweep would need;
then `biorab report` and `biorab explore` work on it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CELLS = 325  # `biorab plan jobs/paper.yaml`


def biorab(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "biorab.cli.main", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=1800)


@pytest.mark.slow
def test_paper_grid_rehearsed_at_limit_2(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env.update(BIORAB_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    done = biorab("sweep", "jobs/paper.yaml", "--rehearse", "--limit", "2", "--no-ray", "--output-dir",
                  str(tmp_path / "reh"), env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stderr.startswith("replaced model llama2-13b: vllm meta-llama/Llama-2-13b-chat-hf -> fake "
                                  "(constraint)")
    sweep_dir = tmp_path / "reh" / "paper"
    assert f"sweep paper: {CELLS} cells in 14 runs" in done.stdout
    rehearsal = json.loads((sweep_dir / "rehearsal.json").read_text(encoding="utf-8"))
    needs = rehearsal["real_sweep_needs"]
    assert needs["cells"] == CELLS and needs["plan_errors"] == [] and needs["gpu_hours"] > 0
    what = {(s["what"], s["name"]) for s in rehearsal["substitutions"]}
    assert {("encoder", "contriever"), ("encoder", "medcpt"), ("tracking", "server")} <= what
    summaries = list(sweep_dir.glob("*/summary.json"))
    assert len(summaries) == 14
    cells = [c for f in summaries for c in json.loads(f.read_text(encoding="utf-8"))["cells"]]
    assert len(cells) == CELLS and all("rehearsal" in json.loads(f.read_text()) for f in summaries)
    # everything cached (indexes, hits, generations) is in the rehearsal's own namespace
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["rehearsal"]

    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=f"sqlite:///{sweep_dir / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("biorab-paper")
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], max_results=1000)
    assert len(runs) == CELLS + 1 and {r.info.status for r in runs} == {"FINISHED"}

    report = biorab("report", str(sweep_dir / "sweep.yaml"), "--no-track", env=env)
    assert report.returncode == 0, report.stderr[-3000:]
    assert (sweep_dir / "report" / "report.md").read_text(encoding="utf-8").startswith(
        f"# Sweep paper: {CELLS} cells")
    explore = biorab("explore", str(sweep_dir), "--no-track", env=env)
    assert explore.returncode == 0, explore.stderr[-3000:]
    assert (sweep_dir / "explorer" / "index.html").is_file()


def test_run_config_rehearsed(tmp_path: Path) -> None:
    import yaml

    config = {"name": "r", "output_dir": str(tmp_path / "real-runs"),
              "datasets": [{"name": "semclass", "limit": 3}, {"name": "git", "limit": 3}],
              "retrieval": [{"testbed": "none"}, {"testbed": "labeled", "retriever": "dense",
                                                   "params": {"encoder": "contriever"}}],
              "backend": {"name": "vllm", "params": {"model": "nobody/no-such-model"}},
              "resources": {"address": "auto", "llm": {"num_gpus": 1, "pool_size": 4}},
              "tracking": {"uri": "http://mlflow.internal:5000"}, "n_boot": 20}
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env.update(BIORAB_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1")
    done = biorab("run", str(path), "--rehearse", "--no-ray", "--no-fetch", "--output-dir",
                  str(tmp_path / "reh"), env=env)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "replaced model r: vllm nobody/no-such-model -> fake (constraint)" in done.stderr
    assert "replaced encoder dense: contriever -> minilm (packaged)" in done.stderr
    assert f"replaced tracking server: http://mlflow.internal:5000 -> sqlite:///{tmp_path / 'reh' / 'r'}" \
        in done.stderr
    cells = json.loads((tmp_path / "reh" / "r" / "summary.json").read_text(encoding="utf-8"))["cells"]
    assert len(cells) == 4 and not (tmp_path / "real-runs").exists()
