"""Corpus folders: BEIR corpus.jsonl whose sha256 is the digest, ledger beside it, strict reading."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.common.records import Example
from biorab.corpora import build_corpus, read_corpus, write_corpus


def _load(name: str) -> list[Example]:
    return [
        Example(
            f"{name}/train/{i}",
            "link_prediction",
            name,
            "train",
            f"What is the relationship between g{i} and d{i} ?",
            "Disease-Gene" if i % 2 else "Interactions",
        )
        for i in range(20)
    ]


def test_written_files_round_trip_and_digest_is_the_file_hash(tmp_path: Path) -> None:
    corpus, ledger = build_corpus("counterfactual", "pharmkg", rate=0.25, seed=2, loader=_load)
    folder = write_corpus(corpus, ledger, tmp_path / "cf")
    assert hashlib.sha256((folder / "corpus.jsonl").read_bytes()).hexdigest() == corpus.digest
    first = json.loads((folder / "corpus.jsonl").read_text().splitlines()[0])
    assert first == {
        "_id": "pharmkg/train/0",
        "title": "",
        "text": "What is the relationship between g0 and d0 ?",
        "metadata": {"value": corpus.items[0].value, "dataset": "pharmkg", "task": "link_prediction"},
    }
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["kind"] == "counterfactual" and manifest["rate"] == 0.25 and manifest["seed"] == 2
    assert manifest["digest"] == corpus.digest and manifest["counts"]["ledger"] == 5
    assert manifest["counts"]["how:label"] == 5
    again, again_ledger = read_corpus(folder)
    assert again.items == corpus.items and again.digest == corpus.digest
    assert again_ledger == ledger
    rebuilt = write_corpus(
        *build_corpus("counterfactual", "pharmkg", rate=0.25, seed=2, loader=_load), tmp_path / "b"
    )
    for name in ("corpus.jsonl", "ledger.jsonl", "manifest.json"):
        assert (rebuilt / name).read_bytes() == (folder / name).read_bytes()


def test_edited_corpus_fails_the_digest_check(tmp_path: Path) -> None:
    folder = write_corpus(*build_corpus("labeled", "pharmkg", loader=_load), tmp_path)
    text = (folder / "corpus.jsonl").read_text().replace("Interactions", "Chemical-Gene", 1)
    (folder / "corpus.jsonl").write_text(text)
    with pytest.raises(DataError, match="digest"):
        read_corpus(folder)


def test_malformed_lines_name_file_line_and_field(tmp_path: Path) -> None:
    folder = write_corpus(*build_corpus("labeled", "pharmkg", loader=_load), tmp_path)
    lines = (folder / "corpus.jsonl").read_text().splitlines()
    (folder / "corpus.jsonl").write_text("\n".join([lines[0], "{not json", *lines[2:]]) + "\n")
    with pytest.raises(DataError, match=r"corpus.jsonl, line 2: not valid JSON"):
        read_corpus(folder)
    broken = json.loads(lines[1])
    del broken["metadata"]["task"]
    (folder / "corpus.jsonl").write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    with pytest.raises(DataError, match=r"line 2, field 'metadata.task'"):
        read_corpus(folder)
    with pytest.raises(DataError, match="file not found"):
        read_corpus(tmp_path / "nowhere")


def test_edited_ledger_fails_the_ledger_digest_check(tmp_path: Path) -> None:
    folder = write_corpus(
        *build_corpus("counterfactual", "pharmkg", rate=0.25, seed=2, loader=_load), tmp_path
    )
    lines = (folder / "ledger.jsonl").read_text().splitlines()
    (folder / "ledger.jsonl").write_text("\n".join(lines[1:]) + "\n")  # one corruption dropped
    with pytest.raises(DataError, match="ledger digest .* does not match"):
        read_corpus(folder)
    stranger = {**json.loads(lines[0]), "item_id": "pharmkg/train/999"}
    (folder / "ledger.jsonl").write_text("\n".join([*lines[1:], json.dumps(stranger)]) + "\n")
    with pytest.raises(DataError, match=r"ledger.jsonl, line 5, field 'item_id'"):
        read_corpus(folder)
