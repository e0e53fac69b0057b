"""Dataset loaders: the eight staged BioRAB datasets, bring-your-own files and the BioNLI preset.

Every loader is registered in `biorab.common.registry.DATASETS` and yields `biorab.common.records.Example`s
with
ids
``"{dataset}/{split}/{i}"`` (``i`` the 0-based row index), the full input as one string in `text` (the
retrieval key/query, never the gold label), the canonical gold label in `label` and structured inputs in
`fields`. Nothing is deduplicated; ``biorab data stats`` reports duplicates.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from biorab.common.build import build
from biorab.common.records import Example
from biorab.common.registry import DATASETS
from biorab.datasets import (  # noqa: F401 - imported to register the loaders
    ade_corpus_v2,
    ade_triples,
    bionli,
    byo,
    chemprot,
    git_triples,
    hetionet,
    medmcqa,
    pharmkg,
    semclass,
)
from biorab.datasets.base import Dataset

#: The datasets staged under the BioRAB data root, in the paper's order (triples, link prediction,
#: classification, QA).
STAGED_DATASETS: tuple[str, ...] = (
    "ade", "chemprot", "git", "pharmkg", "hetionet", "ade_corpus_v2", "semclass", "medmcqa",
)  # fmt: skip


def get_dataset(
    name: str, *, data_dir: str | Path | None = None, params: Mapping[str, Any] | None = None
) -> Dataset:
    """Build the loader `name` (with `params` for configurable ones such as ``byo`` and ``bionli``)."""
    dataset: Dataset = build(DATASETS, name, params, data_dir=data_dir)
    return dataset


def load_dataset(
    name: str, split: str, *, data_dir: str | Path | None = None, params: Mapping[str, Any] | None = None
) -> list[Example]:
    """Load one split of a dataset as `Example`s, in source order.

    Args:
        name: registry name (``ade``, ``chemprot``, ..., ``byo``, ``bionli``).
        split: ``train``, ``dev`` or ``test`` (only the splits the source has).
        data_dir: the data root; default `biorab.common.paths.biorab_data_dir()` (``$BIORAB_DATA_DIR``). For
            ``byo`` it is the folder relative file paths are resolved against.
        params: the loader's params (required for ``byo``).

    Raises:
        UnknownNameError: no such dataset.
        ConfigError: the dataset has no such split, or the params are invalid.
        DataError: a source file is missing or malformed (the message names file, line and field).
    """
    return get_dataset(name, data_dir=data_dir, params=params).load(split)


def dataset_splits(
    name: str, *, data_dir: str | Path | None = None, params: Mapping[str, Any] | None = None
) -> tuple[str, ...]:
    """The splits dataset `name` has, in train/dev/test order (no file is read)."""
    return get_dataset(name, data_dir=data_dir, params=params).splits()


__all__ = ["STAGED_DATASETS", "Dataset", "dataset_splits", "get_dataset", "load_dataset"]
