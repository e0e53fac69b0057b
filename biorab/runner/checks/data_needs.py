"""Which data files an experiment config reads, so `biorab validate` can name a missing one (with the
fix) and `biorab run` can fetch what a fresh machine lacks, before any work starts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from biorab.experiment import ExperimentConfig


@dataclass(frozen=True)
class NeededFile:
    """A file the config reads: the dataset it belongs to, the split, its path and the config key."""

    dataset: str
    split: str
    path: Path
    key: str


def needed_datasets(config: ExperimentConfig) -> list[str]:
    """The BioRAB datasets the cells and their testbed corpora read (the diverse pool for ``diverse``)."""
    from biorab.corpora.testbeds import DIVERSE_POOL

    names = [ds.name for ds in config.datasets]
    if any(spec.testbed == "diverse" for spec in config.retrieval):
        names += list(DIVERSE_POOL)
    return list(dict.fromkeys(names))


def needed_files(config: ExperimentConfig) -> list[NeededFile]:
    """Each cell's split file, and the training file its retrieval corpora are built from.

    Raises:
        ConfigError: no BioRAB data folder is found (the message says how to fetch or point at one).
    """
    from biorab.datasets import get_dataset

    out: list[NeededFile] = []
    retrieves = any(spec.retrieves for spec in config.retrieval)
    for i, ds in enumerate(config.datasets):
        loader = get_dataset(ds.name, data_dir=config.data_dir)
        splits = [ds.split] + (["train"] if retrieves and "train" in loader.splits() else [])
        out += [NeededFile(ds.name, s, loader.path(s), f"datasets.{i}.name") for s in dict.fromkeys(splits)]
    for name in needed_datasets(config):
        if name not in {ds.name for ds in config.datasets}:
            loader = get_dataset(name, data_dir=config.data_dir)
            out.append(NeededFile(name, "train", loader.path("train"), "retrieval"))
    return out


def missing_files(config: ExperimentConfig) -> list[NeededFile]:
    """The needed files that are not on disk."""
    return [f for f in needed_files(config) if not f.path.is_file()]
