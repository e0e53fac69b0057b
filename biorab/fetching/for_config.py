"""What a fresh machine must fetch before `biorab run` can start a config: the data sets it reads, when
no data folder is found (or the one found is the fetched default and lacks some of them).

An explicit location (``--data-dir``, ``data_dir:`` in the config, ``$BIORAB_DATA_DIR`` and friends) is
never fetched into: there a missing file is the user's to fix, and validation says which.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from biorab.errors import ConfigError
from biorab.experiment import ExperimentConfig
from biorab.paths import biorab_data_dir, drugmechcf_dir, drugmechdb_dir, fetched_data_dir


def _found(resolve: Callable[[], Path]) -> Path | None:
    try:
        return resolve()
    except ConfigError:
        return None


def names_to_fetch(config: ExperimentConfig, *, mirror: str | None = None) -> list[str]:
    """The `biorab data fetch` names `config` needs and has no data for (empty: nothing to fetch)."""
    from biorab.runner.data_needs import missing_files, needed_datasets

    names: list[str] = []
    if config.datasets and not config.data_dir and not os.environ.get("BIORAB_DATA_DIR"):
        root = _found(biorab_data_dir)
        if root is None:
            names += needed_datasets(config)
        elif root == fetched_data_dir() / "biorab":
            names += list(dict.fromkeys(f.dataset for f in missing_files(config)))
    spec = config.drugmech
    if spec is not None:
        no_release = not spec.release_dir and not os.environ.get("BIORAB_DRUGMECHCF_DIR")
        if no_release and not _found(drugmechcf_dir):
            names.append("drugmechcf")
        # indication_paths.yaml has no public source with the staged bytes: only a mirror can supply it.
        no_db = not spec.drugmechdb_dir and not os.environ.get("BIORAB_DRUGMECHDB_DIR")
        if mirror and no_db and not _found(drugmechdb_dir):
            names.append("drugmechdb")
    return names
