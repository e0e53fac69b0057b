"""The files a testbed corpus is built from, known without building it: they key the resume of retrieving
cells, so they must name exactly what each builder reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.registry import CORPORA
from biorab.corpora import DIVERSE_POOL, TestbedSpec, build_corpus, source_datasets, source_files
from biorab.datasets import get_dataset

RATES = {"counterfactual": 0.5, "negative_awareness": 1.0, "counterfactual_near": 0.5,
         "counterfactual_far": 0.5}


@pytest.mark.parametrize("kind", sorted(CORPORA.names()))
@pytest.mark.parametrize("dataset", ["semclass", "hetionet"])
def test_sources_are_what_the_builder_reads(kind: str, dataset: str, data_dir: Path) -> None:
    corpus, _ledger = build_corpus(kind, dataset, rate=RATES.get(kind), data_dir=data_dir)
    assert source_datasets(kind, TestbedSpec(dataset=dataset)) == corpus.sources


def test_source_files_of_each_kind(data_dir: Path) -> None:
    assert source_files("labeled", "semclass", data_dir=data_dir) == {
        "semclass:sentence_triple_train.jsonl": data_dir / "semclass" / "sentence_triple_train.jsonl"
    }
    assert source_files("counterfactual", "ade", data_dir=data_dir) == {
        "ade:triplet_extraction_ade_train.json": data_dir / "ade" / "triplet_extraction_ade_train.json"
    }
    diverse = source_files("diverse", "semclass", data_dir=data_dir)
    assert {name.split(":")[0] for name in diverse} == set(DIVERSE_POOL) - {"semclass"}
    assert all(path.is_file() for path in diverse.values())


def test_link_prediction_train_reads_every_split(data_dir: Path) -> None:
    """Its rows are split with the entities of all splits, so an edit of any split changes its corpus."""
    loader = get_dataset("hetionet", data_dir=data_dir)
    assert loader.source_files("train") == (
        data_dir / "hetionet" / "link_predcition_hetionet_train.json",
        data_dir / "hetionet" / "test.derived.json",
    )
    assert get_dataset("semclass", data_dir=data_dir).source_files("train") == (
        data_dir / "semclass" / "sentence_triple_train.jsonl",
    )
