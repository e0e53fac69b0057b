"""The bring-your-own loader and its BioNLI preset, on small files written into tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from biorab.common.errors import ConfigError, DataError
from biorab.datasets import dataset_splits, load_dataset


def _jsonl(path: Path, *rows: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _byo(tmp_path: Path, split: str = "test", **params: Any) -> list[Any]:
    return load_dataset("byo", split, data_dir=tmp_path, params=params)


def test_classification_csv_with_field_mapping(tmp_path: Path) -> None:
    (tmp_path / "sdoh").mkdir()
    (tmp_path / "sdoh/test.csv").write_text(
        'note_id,note,sdoh_label\nn1,"Lives alone, no car.",yes\nn2,Denies tobacco use.,no\n',
        encoding="utf-8",
    )
    examples = _byo(
        tmp_path,
        name="sdoh",
        task="classification",
        files={"test": "sdoh/test.csv"},
        fields={"text": "note", "label": "sdoh_label", "id": "note_id"},
        labels=["yes", "no"],
    )
    assert [(e.id, e.task, e.dataset, e.text, e.label, e.source_line) for e in examples] == [
        ("sdoh/test/0", "classification", "sdoh", "Lives alone, no car.", "yes", 2),
        ("sdoh/test/1", "classification", "sdoh", "Denies tobacco use.", "no", 3),
    ]
    assert examples[0].fields == {"sentence": "Lives alone, no car.", "source_id": "n1"}


def test_label_outside_the_declared_set(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "ds.jsonl", {"text": "a", "label": "yes"}, {"text": "b", "label": "maybe"})
    with pytest.raises(DataError) as info:
        _byo(tmp_path, name="ds", task="classification", files={"test": "ds.jsonl"}, labels=["yes", "no"])
    error = info.value
    assert (error.path, error.line, error.field) == (str(path), 2, "label")
    assert "label 'maybe' is not in the ds label set (yes, no)" in str(error)


def test_label_map_and_integer_labels(tmp_path: Path) -> None:
    _jsonl(tmp_path / "ds.jsonl", {"text": "a", "label": 1}, {"text": "b", "label": 0})
    examples = _byo(
        tmp_path,
        task="classification",
        files={"test": "ds.jsonl"},
        label_map={"1": "y", "0": "n"},
        labels=["y", "n"],
    )
    assert [(e.id, e.label) for e in examples] == [("byo/test/0", "y"), ("byo/test/1", "n")]


def test_triples_from_label_strings_and_lists(tmp_path: Path) -> None:
    _jsonl(
        tmp_path / "t.jsonl",
        {
            "sentence": "Aspirin inhibits COX1 and COX2.",
            "triples": [["Aspirin", "INHIBITS", "COX1"], ["Aspirin", "INHIBITS", "COX2"]],
        },
        {"sentence": "X causes Y.", "triples": "X|CAUSES|Y"},
    )
    examples = _byo(
        tmp_path,
        task="triple_extraction",
        files={"test": "t.jsonl"},
        fields={"sentence": "sentence", "label": "triples"},
        labels=["INHIBITS", "CAUSES"],
    )
    assert [e.label for e in examples] == ["Aspirin|INHIBITS|COX1\nAspirin|INHIBITS|COX2", "X|CAUSES|Y"]
    assert examples[0].text == examples[0].fields["sentence"] == "Aspirin inhibits COX1 and COX2."


def test_triples_from_head_relation_tail_fields(tmp_path: Path) -> None:
    _jsonl(
        tmp_path / "t.jsonl",
        {"s": "X causes Y.", "h": "X", "r": "CAUSES", "t": "Y"},
        {"s": "X treats Y.", "h": "X", "r": "TREATS", "t": "Y"},
    )
    with pytest.raises(DataError) as info:
        _byo(
            tmp_path,
            task="triple_extraction",
            files={"test": "t.jsonl"},
            labels=["CAUSES"],
            fields={"text": "s", "head": "h", "relation": "r", "tail": "t"},
        )
    assert (info.value.line, info.value.field) == (2, "r")
    examples = _byo(
        tmp_path,
        task="triple_extraction",
        files={"test": "t.jsonl"},
        fields={"text": "s", "head": "h", "relation": "r", "tail": "t"},
    )
    assert [e.label for e in examples] == ["X|CAUSES|Y", "X|TREATS|Y"]


def test_malformed_triple(tmp_path: Path) -> None:
    _jsonl(tmp_path / "t.jsonl", {"text": "s", "label": "X|CAUSES"})
    with pytest.raises(DataError, match=r"line 1, field 'label': expected a triple"):
        _byo(tmp_path, task="triple_extraction", files={"test": "t.jsonl"})


def test_link_prediction(tmp_path: Path) -> None:
    head = "head and neck neoplasms"
    _jsonl(tmp_path / "lp.jsonl", {"head": head, "tail": "TP53", "relation": "Disease-Gene"})
    [example] = _byo(
        tmp_path,
        task="link_prediction",
        files={"test": "lp.jsonl"},
        fields={"label": "relation"},
        labels=["Disease-Gene", "Interactions"],
    )
    assert example.text == "What is the relationship between head and neck neoplasms and TP53 ?"
    assert (example.label, example.fields) == ("Disease-Gene", {"head": head, "tail": "TP53"})


def test_qa_with_option_columns_and_letter_answers(tmp_path: Path) -> None:
    (tmp_path / "qa.csv").write_text(
        "q,a,b,c,answer\nWhich?,one,two,three,B\nWhat?,x,y,z,(C)\n", encoding="utf-8"
    )
    examples = _byo(
        tmp_path,
        task="qa",
        files={"test": "qa.csv"},
        fields={"question": "q", "options": ["a", "b", "c"], "label": "answer"},
    )
    assert [e.label for e in examples] == ["(B)", "(C)"]
    assert examples[0].text == "Question: Which?\n Choices: (A) one; (B) two; (C) three"
    assert examples[0].fields == {
        "question": "Which?",
        "options": {"A": "one", "B": "two", "C": "three"},
        "subject": None,
    }


def test_qa_options_as_object_and_answer_outside_options(tmp_path: Path) -> None:
    _jsonl(
        tmp_path / "qa.jsonl",
        {"question": "Q", "options": {"A": "x", "B": "y"}, "label": "(A)"},
        {"question": "Q", "options": {"A": "x", "B": "y"}, "label": "(D)"},
    )
    with pytest.raises(DataError) as info:
        _byo(tmp_path, task="qa", files={"test": "qa.jsonl"})
    assert (info.value.line, info.value.field) == (2, "label")
    assert "answer (D) is not one of the row's options (A), (B)" in str(info.value)


def test_qa_bad_options(tmp_path: Path) -> None:
    _jsonl(tmp_path / "qa.jsonl", {"question": "Q", "options": "not json", "label": "(A)"})
    with pytest.raises(DataError, match=r"field 'options': expected JSON options"):
        _byo(tmp_path, task="qa", files={"test": "qa.jsonl"})


def test_nli(tmp_path: Path) -> None:
    _jsonl(tmp_path / "nli.jsonl", {"premise": "P.", "hypothesis": "H.", "label": "entailment"})
    [example] = _byo(tmp_path, task="nli", files={"test": "nli.jsonl"})
    assert example.text == "Premise: P.\nHypothesis: H."
    assert example.fields == {"premise": "P.", "hypothesis": "H."}


def test_splits_follow_the_given_files(tmp_path: Path) -> None:
    params = {"task": "nli", "files": {"test": "t.jsonl", "train": "tr.jsonl"}}
    assert dataset_splits("byo", params=params) == ("train", "test")
    with pytest.raises(ConfigError, match="has no split 'dev'"):
        load_dataset("byo", "dev", data_dir=tmp_path, params=params)


@pytest.mark.parametrize(("params", "key"), [
    ({"task": "nli", "files": {"test": "t.jsonl"}, "colour": "red"}, "colour"),
    ({"files": {"test": "t.jsonl"}}, "task"),
    ({"task": "summarization", "files": {"test": "t.jsonl"}}, "task"),
    # pydantic locates a bad dict key as "<key>.[key]".
    ({"task": "nli", "files": {"validation": "t.jsonl"}}, "files.validation.[key]"),
    ({"task": "nli", "files": {}}, "files"),
    ({"task": "nli", "files": {"test": "t.jsonl"}, "fields": {"premis": "p"}}, "fields.premis"),
])  # fmt: skip
def test_params_are_validated(params: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        dataset_splits("byo", params=params)
    assert info.value.key == key


def test_format_from_the_file_name(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("x\n", encoding="utf-8")
    with pytest.raises(DataError, match="cannot tell the file format"):
        _byo(tmp_path, task="nli", files={"test": "data.txt"})
    _jsonl(tmp_path / "data.txt", {"premise": "P", "hypothesis": "H", "label": "contradiction"})
    assert _byo(tmp_path, task="nli", files={"test": "data.txt"}, format="jsonl")[0].label == "contradiction"


def test_missing_byo_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="byo test split not found; check the 'files' paths") as info:
        _byo(tmp_path, task="nli", files={"test": "nope.jsonl"})
    assert info.value.path == str(tmp_path / "nope.jsonl")


PREMISE = "Drug X lowered IL-6 in mice."
BIONLI_ROWS = (
    {"premise": PREMISE, "hypothesis": "X reduces inflammation.", "label": "entailment"},
    {"premise": PREMISE, "hypothesis": "X raises IL-6.", "label": "contradiction"},
)


def test_bionli_preset_reads_the_default_layout(tmp_path: Path) -> None:
    for split in ("train", "dev", "test"):
        _jsonl(tmp_path / "bionli" / f"{split}.jsonl", *BIONLI_ROWS)
    assert dataset_splits("bionli") == ("train", "dev", "test")
    examples = load_dataset("bionli", "dev", data_dir=tmp_path)
    assert [(e.id, e.task, e.dataset, e.label) for e in examples] == [
        ("bionli/dev/0", "nli", "bionli", "entailment"),
        ("bionli/dev/1", "nli", "bionli", "contradiction"),
    ]
    assert examples[1].text == "Premise: Drug X lowered IL-6 in mice.\nHypothesis: X raises IL-6."


def test_bionli_rejects_other_labels_unless_mapped(tmp_path: Path) -> None:
    _jsonl(tmp_path / "bionli/test.jsonl", {**BIONLI_ROWS[0], "label": "neutral"})
    with pytest.raises(DataError) as info:
        load_dataset("bionli", "test", data_dir=tmp_path)
    assert (info.value.line, info.value.field) == (1, "label")
    assert "(entailment, contradiction)" in str(info.value)
    _jsonl(tmp_path / "bionli/test.jsonl", {**BIONLI_ROWS[0], "label": "pos"})
    examples = load_dataset("bionli", "test", data_dir=tmp_path, params={"label_map": {"pos": "entailment"}})
    assert examples[0].label == "entailment"


def test_bionli_missing_files_say_where_to_put_them(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        load_dataset("bionli", "train", data_dir=tmp_path)
    message = str(info.value)
    assert info.value.path == str(tmp_path / "bionli/train.jsonl")
    assert f"under {tmp_path / 'bionli'}" in message and "'premise', 'hypothesis' and 'label'" in message


def test_bionli_custom_paths_and_fields(tmp_path: Path) -> None:
    _jsonl(tmp_path / "mine.jsonl", {"supp": "P", "concl": "H", "label": "contradiction"})
    params = {"files": {"test": "mine.jsonl"}, "fields": {"premise": "supp", "hypothesis": "concl"}}
    assert dataset_splits("bionli", params=params) == ("test",)
    [example] = load_dataset("bionli", "test", data_dir=tmp_path, params=params)
    assert (example.text, example.label) == ("Premise: P\nHypothesis: H", "contradiction")
