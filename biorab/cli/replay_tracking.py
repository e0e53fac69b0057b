"""`biorab track RUN_DIR`: log results that are already on disk (after an unreachable tracking server).

A use case of the CLI, not of `biorab.tracking`: it runs the runner and the sweep, which tracking serves.

A finished run dir (``config.yaml``) or sweep dir (``sweep.yaml``) is run again with resume: nothing is
pending, so nothing is generated and no model is loaded; the cells are scored from disk and tracked into
the same keyed MLflow runs as before.
"""

from __future__ import annotations

from pathlib import Path

from biorab.common.errors import ConfigError, TrackingError


def track_dir(path: Path, *, uri: str | None = None) -> str:
    """Track the run or sweep in `path` (``uri`` overrides its ``tracking.uri``); returns the store URI."""
    path = path.resolve()
    if (path / "sweep.yaml").is_file():
        return _track_sweep(path, uri)
    if (path / "config.yaml").is_file():
        return _track_run(path, uri)
    raise ConfigError("neither a run dir (config.yaml) nor a sweep dir (sweep.yaml)", path=path)


def _track_sweep(path: Path, uri: str | None) -> str:
    from biorab.sweep.config import load_sweep
    from biorab.sweep.run import run_sweep

    sweep = load_sweep(path / "sweep.yaml")
    tracking = sweep.tracking.model_copy(update={"enabled": True, "uri": uri or sweep.tracking.uri})
    result = run_sweep(sweep.model_copy(update={"output_dir": str(path.parent), "tracking": tracking}))
    if result.tracking_error or not result.tracking_uri:
        raise TrackingError(result.tracking_error or "nothing was tracked")
    return result.tracking_uri


def _track_run(path: Path, uri: str | None) -> str:
    from biorab.common.config_loading import load_config
    from biorab.experiment import ExperimentConfig
    from biorab.runner import run_experiment

    config = load_config(ExperimentConfig, path / "config.yaml")
    tracking = config.tracking.model_copy(update={"enabled": True, "uri": uri or config.tracking.uri})
    update = {"output_dir": str(path.parent), "name": path.name, "tracking": tracking}
    config = config.model_copy(update=update)
    result = run_experiment(config, track=True)
    assert result.tracking_uri is not None
    return result.tracking_uri
