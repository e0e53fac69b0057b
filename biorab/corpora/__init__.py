"""Retrieval corpora as (key, value) items and the paper's testbed corpora.

`build_corpus(kind, dataset, rate=, seed=)` returns a `Corpus` and the `Ledger` of every corruption;
`write_corpus` / `read_corpus` store them as ``corpus.jsonl`` (BEIR), ``ledger.jsonl`` and
``manifest.json``. The builders live in `testbeds` and are registered in `CORPORA` under the kind names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from biorab.common.errors import UnknownNameError
from biorab.common.records import Example
from biorab.common.registry import CORPORA
from biorab.corpora.corpus import KINDS, Corpus, Ledger, LedgerEntry, canonical_jsonl, corpus_digest
from biorab.corpora.store import read_corpus, write_corpus
from biorab.corpora.testbeds import DIVERSE_POOL, Loader, TestbedSpec, corrupted_count, source_datasets


def train_loader(data_dir: str | Path | None = None) -> Loader:
    """A loader of each dataset's training split from `data_dir` (the staged data by default)."""

    def load(name: str) -> Sequence[Example]:
        from biorab.datasets import load_dataset

        return load_dataset(name, "train", data_dir=data_dir)

    return load


def build_corpus(
    kind: str,
    dataset: str,
    *,
    rate: float | None = None,
    seed: int = 0,
    data_dir: str | Path | None = None,
    pool: Sequence[str] | None = None,
    loader: Loader | None = None,
) -> tuple[Corpus, Ledger]:
    """Build the `kind` testbed corpus for `dataset`.

    Args:
        kind: ``labeled``, ``unlabeled``, ``counterfactual``, ``diverse`` or ``negative_awareness``.
        dataset: the target dataset (its training split is the corpus, or is excluded for ``diverse``).
        rate: the share of wrongly labelled items, required for ``counterfactual`` only.
        seed: seeds every random choice; the same arguments give byte-identical corpora.
        data_dir: the BioRAB data folder (default: the staged data).
        pool: the datasets of the ``diverse`` pool (default `DIVERSE_POOL`).
        loader: dataset name -> training examples; overrides `data_dir` (tests, bring-your-own data).

    Returns:
        The corpus and the ledger of every corrupted or removed value.
    """
    if kind not in CORPORA:  # the registry would say "unknown corpus"; users pick a testbed kind
        raise UnknownNameError("testbed", kind, CORPORA.names())
    builder = CORPORA.get(kind)
    spec = TestbedSpec(dataset=dataset, rate=rate, seed=seed, pool=tuple(pool) if pool else DIVERSE_POOL)
    result: tuple[Corpus, Ledger] = builder(spec, loader or train_loader(data_dir))
    return result


def source_files(
    kind: str, dataset: str, *, data_dir: str | Path | None = None, pool: Sequence[str] | None = None
) -> dict[str, Path]:
    """The files the `kind` corpus of `dataset` is built from, named ``<dataset>:<file name>``: each source
    dataset's training split and whatever its loader reads with it (no file is read here). Their contents
    key the resume of retrieving cells (`biorab.runner.plan.cell_slices.corpus_key`)."""
    from biorab.datasets import get_dataset

    spec = TestbedSpec(dataset=dataset, pool=tuple(pool) if pool else DIVERSE_POOL)
    return {f"{name}:{path.name}": path for name in source_datasets(kind, spec)
            for path in get_dataset(name, data_dir=data_dir).source_files("train")}


__all__ = [
    "DIVERSE_POOL",
    "KINDS",
    "Corpus",
    "Ledger",
    "LedgerEntry",
    "TestbedSpec",
    "build_corpus",
    "canonical_jsonl",
    "corpus_digest",
    "corrupted_count",
    "read_corpus",
    "source_datasets",
    "source_files",
    "train_loader",
    "write_corpus",
]
