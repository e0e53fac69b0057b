"""The leakage audit (`biorab.corpora.leakage`, ``biorab data leakage``): normalization, same-label rule,
the cache, and the counts of every staged dataset, pinned on the full data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biorab.cli.main import app
from biorab.common.records import CorpusItem, Example
from biorab.corpora import Corpus
from biorab.corpora.leakage import Overlap, leakage_audit, overlap

CORPORA = ("labeled", "unlabeled", "counterfactual-0.2", "counterfactual-0.8", "counterfactual-1", "diverse")
# (test, in_corpus, same_label) per dataset and corpus (in `CORPORA` order), measured on ../shared/data.
MEASURED = {
    "ade": [(2130, 1110, 81), (2130, 1110, 0), (2130, 1110, 63), (2130, 1110, 14), (2130, 1110, 0),
            (2130, 683, 0)],
    "chemprot": [(3438, 4, 4), (3438, 4, 0), (3438, 4, 4), (3438, 4, 1), (3438, 4, 0), (3438, 0, 0)],
    "git": [(930, 18, 0), (930, 18, 0), (930, 18, 0), (930, 18, 0), (930, 18, 0), (930, 0, 0)],
    "pharmkg": [(500, 0, 0)] * 5 + [(500, 1, 0)],
    "hetionet": [(500, 0, 0)] * 6,
    "ade_corpus_v2": [(500, 97, 97), (500, 97, 0), (500, 97, 82), (500, 97, 30), (500, 97, 0), (500, 112, 0)],
    "semclass": [(600, 7, 7), (600, 7, 0), (600, 7, 4), (600, 7, 2), (600, 7, 0), (600, 0, 0)],
    "medmcqa": [(4183, 0, 0)] * 6,
}
PINNED = {name: dict(zip(CORPORA, counts, strict=True)) for name, counts in MEASURED.items()}


def _corpus(task: str, rows: list[tuple[str, str | None]]) -> Corpus:
    items = [CorpusItem(f"d/train/{i}", key, value, "d", task) for i, (key, value) in enumerate(rows)]
    return Corpus("labeled", "d", items, sources=("d",))


def _test(task: str, text: str, label: str, i: int = 0) -> Example:
    return Example(f"d/test/{i}", task, "d", "test", text, label)


def test_texts_match_after_lower_casing_and_collapsing_whitespace() -> None:
    corpus = _corpus("classification", [("Aspirin  caused RASH.", "1"), ("Other.", "0")])
    tests = [_test("classification", "aspirin caused rash. ", "1", 0),
             _test("classification", "Aspirin caused a rash.", "1", 1),
             _test("classification", "OTHER.", "1", 2)]
    assert overlap(tests, corpus) == Overlap(test=3, in_corpus=2, same_label=1)


def test_triples_carry_the_same_label_when_the_triples_are_the_same_set() -> None:
    corpus = _corpus("triple_extraction", [("S.", "a|r|b\nc|r|d"), ("T.", "a|r|b")])
    tests = [_test("triple_extraction", "S.", "c|r|d\nA|r|b", 0),  # same set, other order and case
             _test("triple_extraction", "T.", "a|r|b\nx|r|y", 1)]  # a superset is not the same triples
    assert overlap(tests, corpus) == Overlap(test=2, in_corpus=2, same_label=1)


def test_an_unlabeled_corpus_never_has_the_same_label() -> None:
    corpus = _corpus("classification", [("S.", None)])
    assert overlap([_test("classification", "S.", "1")], corpus) == Overlap(1, 1, 0)


def test_counts_are_cached_by_corpus_digest(data_dir: Path, tmp_path: Path) -> None:
    first = leakage_audit(["ade_corpus_v2"], data_dir=data_dir, rates=(1.0,), cache=tmp_path)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 4  # labeled, unlabeled, counterfactual-1, diverse
    planted = json.loads(files[0].read_text())
    files[0].write_text(json.dumps({**planted, "test": 12345}))  # a cached entry is read, not recomputed
    second = leakage_audit(["ade_corpus_v2"], data_dir=data_dir, rates=(1.0,), cache=tmp_path)
    assert sorted(o.test for o in second["ade_corpus_v2"].values()).count(12345) == 1
    assert {k: v for k, v in first["ade_corpus_v2"].items()} != second["ade_corpus_v2"]


@pytest.mark.full_data
def test_every_staged_dataset_is_pinned(full_data_dir: Path, tmp_path: Path) -> None:
    found = leakage_audit(tuple(PINNED), data_dir=full_data_dir, cache=tmp_path)
    got = {name: {c: (o.test, o.in_corpus, o.same_label) for c, o in by.items()}
           for name, by in found.items()}
    assert got == PINNED


@pytest.mark.full_data
def test_cli_json_for_ade_corpus_v2(full_data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["data", "leakage", "ade_corpus_v2", "--json",
                                      "--data-dir", str(full_data_dir)])
    assert result.exit_code == 0, result.output
    labeled = json.loads(result.output)["datasets"]["ade_corpus_v2"]["labeled"]
    assert labeled == {"test": 500, "in_corpus": 97, "same_label": 97}
