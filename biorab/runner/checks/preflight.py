"""Checks that `biorab run` makes before it writes anything, and that `biorab validate` makes too, so that
validation agrees with the run: the data files exist and are not empty, the output directory can be
created and written, and a remote OpenAI-compatible backend has its API key.

Each check raises `ConfigError` naming the config key (and the file, when given) and the fix.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlparse

from biorab.common.errors import BioRABError, ConfigError
from biorab.experiment import ExperimentConfig
from biorab.generation.capabilities import capabilities_of

_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})  # as the openai backend


def preflight(config: ExperimentConfig, *, path: str | Path | None = None, check_data: bool = True) -> None:
    """Everything `run` would refuse before computing (see the module docstring)."""
    check_output_dir(config, path=path)
    check_api_key(config, path=path)
    if check_data:
        check_data_files(config, path=path)


def check_output_dir(config: ExperimentConfig, *, path: str | Path | None = None) -> None:
    """The run dir is a folder or can be made one, and is writable: walk up to the first existing part."""
    run_dir = config.run_dir().absolute()
    existing = run_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(f"{existing} is a file, so the run folder {run_dir} cannot be created; remove it "
                          "or choose another output_dir (or --output-dir)", key="output_dir", path=path)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"{existing} is not writable, so the run folder {run_dir} cannot be written; make "
                          "it writable or choose another output_dir (or --output-dir)", key="output_dir",
                          path=path)


def check_api_key(config: ExperimentConfig, *, path: str | Path | None = None) -> None:
    """A remote ``openai`` backend needs its key in the environment (loopback servers get a dummy one)."""
    if not capabilities_of(config.backend.name).server_client:
        return
    params = config.backend.params
    env = str(params.get("api_key_env", "OPENAI_API_KEY"))
    base_url = str(params.get("base_url", "https://api.openai.com/v1"))
    if not os.environ.get(env) and urlparse(base_url).hostname not in _LOOPBACK:
        raise ConfigError(f"${env} is not set; export the API key for {base_url} (or name another variable "
                          "in backend.params.api_key_env)", key="backend.params.api_key_env", path=path)


def check_data_files(config: ExperimentConfig, *, path: str | Path | None = None) -> None:
    """Each dataset's split file exists and holds at least one example."""
    from biorab.datasets import get_dataset

    if not config.datasets:
        return
    root = data_root(config, path=path)
    for i, spec in enumerate(config.datasets):
        try:
            dataset = get_dataset(spec.name, data_dir=root)
            source = dataset.path(spec.split)
        except ConfigError:
            raise
        except BioRABError as e:
            raise ConfigError(str(e), key=f"datasets.{i}.name", path=path) from e
        if not source.exists():
            raise ConfigError(f"{source} not found (the data folder of {spec.name!r}); set data_dir in the "
                              "config or $BIORAB_DATA_DIR to the staged data", key="data_dir", path=path)
        if next(iter(dataset.rows(spec.split)), None) is None:  # reads one row, not the whole split
            raise ConfigError(f"{source}: split {spec.split!r} of {spec.name!r} has no examples; nothing to "
                              "evaluate", key=f"datasets.{i}.split", path=path)


def data_root(config: ExperimentConfig, *, path: str | Path | None = None) -> Path:
    """The BioRAB data folder the run will read, with an error that names the config key (`run` has no
    ``--data-dir`` option: the folder comes from the config or the environment)."""
    from biorab.common.paths import biorab_data_dir

    if config.data_dir is not None and not Path(config.data_dir).expanduser().is_dir():
        raise ConfigError(f"data folder {config.data_dir} does not exist; fix data_dir, or remove it to use "
                          "$BIORAB_DATA_DIR", key="data_dir", path=path)
    try:
        return biorab_data_dir(config.data_dir)
    except ConfigError as e:
        raise ConfigError(f"{e}; set data_dir in the config or $BIORAB_DATA_DIR", key="data_dir",
                          path=path) from e
