"""Relevance from the original prompt files: parsing both staged formats, and agreement with the authors'
BM25 run on Hetionet (pinned)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.errors import DataError, RetrievalError
from biorab.common.records import CorpusItem, Example
from biorab.corpora import build_corpus
from biorab.datasets import load_dataset
from biorab.retrieval import build_retriever
from biorab.retrieval.original import original_judgements, original_sources
from biorab.retrieval.quality import evaluate


def _container(folder: Path, rows: list[tuple[str, tuple[str, str]]]) -> Path:
    (folder / "ade").mkdir(parents=True)
    lines = [
        json.dumps({"instruction": f"Extract. Excample: context: {key}response: {value}", "context": ctx})
        for ctx, (key, value) in rows
    ]
    (folder / "ade" / "test_instruction_container.json").write_text("\n".join(lines) + "\n")
    return folder


def test_container_prompts_become_judgements(tmp_path: Path) -> None:
    items = [
        CorpusItem("ade/train/0", "drug A caused rash.", "A|effect|rash", "ade", "triple_extraction"),
        CorpusItem("ade/train/1", "drug A caused rash.", "A|effect|rash", "ade", "triple_extraction"),
        CorpusItem("ade/train/2", "drug A caused rash.", "A|dosage|rash", "ade", "triple_extraction"),
        CorpusItem("ade/train/3", "drug B caused fever.", "B|effect|fever", "ade", "triple_extraction"),
    ]
    tests = [
        Example(f"ade/test/{i}", "triple_extraction", "ade", "test", text, "x|effect|y")
        for i, text in enumerate(["drug C caused  rash.", "drug D caused fever.", "unmatched"])
    ]
    rows = [
        ("drug C caused rash.", ("drug A caused rash.", "A|effect|rash")),
        ("drug D caused fever.", ("drug B caused fever.", "B|unknown|fever")),  # value unknown: key match
        ("nobody", ("drug B caused fever.", "B|effect|fever")),
    ]  # context matches no test example
    data = _container(tmp_path / "data", rows)
    judgements = original_judgements("ade", "container", tests, items, data_dir=data)
    assert judgements.queries == {"ade/test/0": "drug C caused  rash.", "ade/test/1": "drug D caused fever."}
    assert judgements.relevant == {"ade/test/0": {"ade/train/0"}, "ade/test/1": {"ade/train/3"}}


def test_bad_prompt_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(RetrievalError, match="staged: ade:container"):
        original_judgements("ade", "bm25", [], [], data_dir=tmp_path)
    (tmp_path / "ade").mkdir()
    (tmp_path / "ade" / "test_instruction_container.json").write_text('{"instruction": "no example"}\n')
    with pytest.raises(DataError, match="line 1, field 'instruction'"):
        original_judgements("ade", "container", [], [], data_dir=tmp_path)
    (tmp_path / "ade" / "test_instruction_container.json").write_text('{"instruction": "x"}\n["a list"]\n')
    with pytest.raises(DataError, match="line 2: each line must be a JSON object"):
        original_judgements("ade", "container", [], [], data_dir=tmp_path)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_agreement_with_the_original_hetionet_bm25_run(data_dir: Path, tmp_path: Path) -> None:
    assert original_sources("hetionet") == ["bm25", "contriever", "instructor", "random"]
    corpus, _ = build_corpus("labeled", "hetionet", data_dir=data_dir)
    tests = load_dataset("hetionet", "test", data_dir=data_dir)
    judgements = original_judgements("hetionet", "bm25", tests, corpus.items, data_dir=data_dir)
    assert len(judgements.queries) == 500
    bm25 = build_retriever("bm25", cache_root=tmp_path)
    bm25.index(corpus.items)
    report = evaluate(bm25.search(judgements.queries, 10), judgements, corpus.items, [1, 10])
    # Our query is the test input alone; the authors' BM25 example agrees with our top-1 half the time.
    assert report.to_json() == pytest.approx(
        {"recall@1": 0.492, "recall@10": 0.78, "mrr": 0.5826667, "n": 500}
    )
