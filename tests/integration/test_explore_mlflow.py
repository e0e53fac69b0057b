"""`biorab explore` of a tracked run logs the explorer on the run's MLflow parent run (local store), and
of an untracked one creates no store."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_runs import biorab, write_config

pytestmark = pytest.mark.slow


def test_explorer_logged_on_the_parent_run(tmp_path: Path, data_dir: Path) -> None:
    from mlflow.tracking import MlflowClient

    from biorab.tracking.runs import KEY

    config = write_config(tmp_path, data_dir, name="explored", tracking={"experiment": "explore-mlflow"})
    cache = tmp_path / "cache"
    assert biorab("run", str(config), "--no-ray", cache=cache, MLFLOW_TRACKING_URI="").returncode == 0
    run_dir = tmp_path / "runs" / "explored"
    out = biorab("explore", str(run_dir), cache=cache, MLFLOW_TRACKING_URI="")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == str(run_dir / "explorer" / "index.html")
    client = MlflowClient(f"sqlite:///{run_dir}/mlflow.db")
    experiment = client.get_experiment_by_name("explore-mlflow")
    assert experiment is not None
    (parent,) = [r for r in client.search_runs([experiment.experiment_id]) if "cell_id" not in r.data.tags]
    assert parent.data.tags[KEY].startswith("run:explored:")
    assert f"logged on MLflow run {parent.info.run_id} as explorer/" in out.stderr
    logged = {a.path for a in client.list_artifacts(parent.info.run_id, "explorer")}
    assert logged == {"explorer/index.html", "explorer/explorer.js", "explorer/explorer-stats.js",
                      "explorer/explorer.css", "explorer/data"}
    data = {a.path for a in client.list_artifacts(parent.info.run_id, "explorer/data")}
    assert data == {f"explorer/data/{name}.js" for name in ("manifest", "index-00000", "detail-00000")}

    untracked = write_config(tmp_path, data_dir, name="untracked")
    assert biorab("run", str(untracked), "--no-ray", cache=cache).returncode == 0
    out = biorab("explore", str(tmp_path / "runs" / "untracked"), cache=cache, MLFLOW_TRACKING_URI="")
    assert out.returncode == 0 and "not logged to MLflow" in out.stderr
    assert not (tmp_path / "runs" / "untracked" / "mlflow.db").exists()
