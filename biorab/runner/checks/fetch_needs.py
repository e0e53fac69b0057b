"""What a fresh machine must fetch before `biorab run` can start a config: the data sets it reads, when
no data folder is found (or the one found is the fetched default and lacks some of them).

An explicit location (``--data-dir``, ``data_dir:`` in the config, ``$BIORAB_DATA_DIR`` and friends) is
never fetched into: there a missing file is the user's to fix, and validation says which.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from biorab.common.errors import ConfigError
from biorab.common.paths import biorab_data_dir, drugmechcf_dir, drugmechdb_dir, fetched_data_dir
from biorab.experiment import ExperimentConfig
from biorab.runner.checks.data_needs import missing_files, needed_datasets


def _found(resolve: Callable[[], Path]) -> Path | None:
    try:
        return resolve()
    except ConfigError:
        return None


def names_to_fetch(config: ExperimentConfig) -> list[str]:
    """The `biorab data fetch` names `config` needs and has no data for (empty: nothing to fetch)."""
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
        if no_release and _lacks("drugmechcf", drugmechcf_dir):
            names.append("drugmechcf")
        # Scoring reads DrugMechDB for the reference MoA of a YES answer: every DrugMech config needs it.
        no_db = not spec.drugmechdb_dir and not os.environ.get("BIORAB_DRUGMECHDB_DIR")
        if no_db and _lacks("drugmechdb", drugmechdb_dir):
            names.append("drugmechdb")
    return names


def _lacks(group: str, resolve: Callable[[], Path]) -> bool:
    """No `group` folder is found, or the one found is the fetched default and misses a file of the group
    (an interrupted fetch: the rerun resumes it)."""
    from biorab.fetching.manifest import load_manifest

    found = _found(resolve)
    if found is None:
        return True
    root = fetched_data_dir()
    if found != root / group:
        return False
    return any(not (root / f.path).is_file() for f in load_manifest().select((group,)))
