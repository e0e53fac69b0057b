"""Malformed staged files (written into a temp data root) give a `DataError` naming file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from biorab.common.errors import DataError
from biorab.datasets import load_dataset


def _write(root: Path, relative: str, text: str | bytes) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _jsonl(*rows: dict[str, object]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _error(root: Path, name: str, split: str) -> DataError:
    with pytest.raises(DataError) as info:
        load_dataset(name, split, data_dir=root)
    return info.value


GOOD_ADE = {"text": "Phenytoin toxicity.", "label": "Phenytoin|effect|toxicity"}


def test_triple_relation_outside_the_relation_set(tmp_path: Path) -> None:
    path = _write(tmp_path, "ade/test.derived.jsonl", _jsonl(GOOD_ADE, {"text": "x", "label": "a|causes|b"}))
    error = _error(tmp_path, "ade", "test")
    assert (error.path, error.line, error.field) == (str(path), 2, "label")
    assert str(error).startswith(f"{path}, line 2, field 'label': label 'causes' is not in the ade label set")
    assert "(effect, dosage)" in str(error)


@pytest.mark.parametrize(("row", "field", "message"), [
    ({"label": "a|effect|b"}, "text", "missing field"),
    ({"text": "  ", "label": "a|effect|b"}, "text", "empty value"),
    ({"text": "s", "label": "a|effect"}, "label", "expected 'head|relation|tail'"),
    ({"text": "s", "label": "a||b|effect|c"}, "label", "5 parts"),
    ({"text": "s", "label": " |effect|b"}, "label", "empty element"),
    ({"text": 7, "label": "a|effect|b"}, "text", "expected a string, got int"),
])  # fmt: skip
def test_bad_ade_rows(tmp_path: Path, row: dict[str, object], field: str, message: str) -> None:
    _write(tmp_path, "ade/triplet_extraction_ade_train.json", _jsonl(GOOD_ADE, GOOD_ADE, row))
    error = _error(tmp_path, "ade", "train")
    assert (error.line, error.field) == (3, field)
    assert message in str(error)


def test_truncated_jsonl_line(tmp_path: Path) -> None:
    text = _jsonl(GOOD_ADE, GOOD_ADE) + '{"text": "Phenytoin toxicity.", "label": "Phen'
    path = _write(tmp_path, "ade/test.derived.jsonl", text)
    error = _error(tmp_path, "ade", "test")
    assert (error.path, error.line) == (str(path), 3)
    assert "invalid JSON" in str(error) and "truncated" in str(error)


def test_blank_lines_are_not_rows_but_keep_line_numbers(tmp_path: Path) -> None:
    _write(tmp_path, "ade/test.derived.jsonl", _jsonl(GOOD_ADE) + "\n" + _jsonl(GOOD_ADE))
    examples = load_dataset("ade", "test", data_dir=tmp_path)
    assert [(e.id, e.source_line) for e in examples] == [("ade/test/0", 1), ("ade/test/1", 3)]


def test_non_utf8_bytes_name_the_line(tmp_path: Path) -> None:
    _write(tmp_path, "ade/test.derived.jsonl", _jsonl(GOOD_ADE).encode() + b'{"text": "caf\xe9"}\n')
    error = _error(tmp_path, "ade", "test")
    assert error.line == 2 and "not valid UTF-8" in str(error)


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    error = _error(tmp_path, "hetionet", "test")
    assert error.path == str(tmp_path / "hetionet/test.derived.json")
    assert "not found" in str(error) and "--data-dir" in str(error)


CHEM = {"text": " Tomudex  raised  cyclin E ", "triple_list": [["Tomudex", "ACTIVATOR", "cyclin E"]]}


def test_truncated_json_array(tmp_path: Path) -> None:
    text = json.dumps([CHEM, CHEM, CHEM])
    path = _write(tmp_path, "chemprot/dev_triples.json", text[: len(text) - 40])
    error = _error(tmp_path, "chemprot", "dev")
    assert (error.path, error.line) == (str(path), 1)
    assert "item 3: invalid JSON" in str(error)


@pytest.mark.parametrize(("item", "field", "message"), [
    ({"text": "s", "triple_list": [["a", "INHIBITOR", "b"]]}, "triple_list[0][1]",
     "label 'INHIBITOR' is not in the chemprot label set"),
    ({"text": "s", "triple_list": [["a", "AGONIST", "b"], ["a", "AGONIST", "c"]]}, "triple_list",
     "exactly one triple, got 2"),
    ({"text": "s", "triple_list": [["a", "AGONIST"]]}, "triple_list[0]", "expected [head, relation, tail]"),
    ({"text": "s"}, "triple_list", "missing field"),
    ({"text": "s", "triple_list": [["a|x", "AGONIST", "b"]]}, "triple_list[0][0]", "contains '|'"),
])  # fmt: skip
def test_bad_chemprot_items(tmp_path: Path, item: dict[str, object], field: str, message: str) -> None:
    # Pretty-printed: each item starts on its own line, so the error can name the physical line too.
    path = _write(
        tmp_path,
        "chemprot/train_triples.json",
        "[\n" + ",\n".join(json.dumps(x) for x in (CHEM, item, CHEM)) + "\n]\n",
    )
    error = _error(tmp_path, "chemprot", "train")
    assert (error.path, error.line, error.field) == (str(path), 3, field)
    assert str(error).startswith(f"{path}, line 3, field {field!r}: item 2: ")
    assert message in str(error)


def test_json_array_items_get_their_index_as_source_line(tmp_path: Path) -> None:
    _write(tmp_path, "chemprot/test_triples.json", json.dumps([CHEM, CHEM]))
    examples = load_dataset("chemprot", "test", data_dir=tmp_path)
    assert [e.source_line for e in examples] == [1, 2]
    assert examples[0].fields["sentence"] == " Tomudex  raised  cyclin E "


def test_json_array_with_trailing_data_or_non_objects(tmp_path: Path) -> None:
    _write(tmp_path, "chemprot/test_triples.json", json.dumps([CHEM]) + "\n[]")
    assert "unexpected data after the JSON array" in str(_error(tmp_path, "chemprot", "test"))
    _write(tmp_path, "chemprot/test_triples.json", json.dumps([CHEM, ["not", "an", "object"]]))
    assert "item 2: expected a JSON object, got list" in str(_error(tmp_path, "chemprot", "test"))
    _write(tmp_path, "chemprot/test_triples.json", json.dumps(CHEM))
    assert "expected a JSON array" in str(_error(tmp_path, "chemprot", "test"))


def test_git_missing_predicate(tmp_path: Path) -> None:
    row = {"SUBJECT_TEXT": "tonin", "OBJECT_TEXT": "rats", "SENTENCE": "tonin in rats"}
    _write(tmp_path, "git/renew_triplet_T_dev.jsonl", _jsonl(row))
    error = _error(tmp_path, "git", "dev")
    assert (error.line, error.field) == (1, "PREDICATE")


def test_link_prediction_label_and_text(tmp_path: Path) -> None:
    good = {"text": "What is the relationship between A and B ?", "label": "binds"}
    _write(tmp_path, "hetionet/test.derived.json", _jsonl(good, {**good, "label": "palliates"}))
    error = _error(tmp_path, "hetionet", "test")
    assert (error.line, error.field) == (2, "label") and "'palliates' is not in the hetionet" in str(error)
    _write(tmp_path, "hetionet/test.derived.json", _jsonl(good, {**good, "text": "A binds B"}))
    error = _error(tmp_path, "hetionet", "test")
    assert (error.line, error.field) == (2, "text") and "What is the relationship between" in str(error)


@pytest.mark.parametrize("label", [2, True, "yes", None, 1.0])
def test_ade_corpus_v2_bad_labels(tmp_path: Path, label: object) -> None:
    _write(tmp_path, "ade_corpus_v2/ade_corpus_v2_test.json", _jsonl({"text": "s", "label": label}))
    error = _error(tmp_path, "ade_corpus_v2", "test")
    assert (error.line, error.field) == (1, "label")


def test_ade_corpus_v2_accepts_string_labels(tmp_path: Path) -> None:
    _write(tmp_path, "ade_corpus_v2/ade_corpus_v2_test.json", _jsonl({"text": "s", "label": "0"}))
    assert load_dataset("ade_corpus_v2", "test", data_dir=tmp_path)[0].label == "0"


def test_semclass_bad_label(tmp_path: Path) -> None:
    row = {
        "ID": "P1",
        "head": "a",
        "relation": "INHIBITS",
        "tail": "b",
        "sentence": "a inhibits b",
        "label": "Y",
    }
    _write(tmp_path, "semclass/sentence_triple_test.jsonl", _jsonl(row))
    error = _error(tmp_path, "semclass", "test")
    assert error.field == "label"
    assert str(error).endswith("label 'Y' is not in the semclass label set (y, n)")


MCQ = {"question": "Q?", "opa": "a", "opb": "b", "opc": "c", "opd": "", "cop": 4, "subject_name": "Anatomy"}


@pytest.mark.parametrize(("change", "field"), [
    ({"cop": 5}, "cop"), ({"cop": 0}, "cop"), ({"cop": "1"}, "cop"), ({"opb": None}, "opb"),
    ({"question": ""}, "question"),
])  # fmt: skip
def test_medmcqa_official_rows(tmp_path: Path, change: dict[str, object], field: str) -> None:
    _write(tmp_path, "medmcqa/dev.json", _jsonl(MCQ, {**MCQ, **change}))
    error = _error(tmp_path, "medmcqa", "test")
    assert (error.line, error.field) == (2, field)


def test_medmcqa_official_row_with_empty_option(tmp_path: Path) -> None:
    _write(tmp_path, "medmcqa/dev.json", _jsonl(MCQ))
    example = load_dataset("medmcqa", "test", data_dir=tmp_path)[0]
    assert example.label == "(D)"
    assert example.text == "Question: Q?\n Choices: (A) a; (B) b; (C) c; (D) "


def test_medmcqa_train_text_must_have_four_choices(tmp_path: Path) -> None:
    row = {"text": "Question: Q?\n Choices: (A) a; (B) b; (C) c", "label": "(A)"}
    _write(tmp_path, "medmcqa/MedMCQA_train_4000.json", _jsonl(row))
    error = _error(tmp_path, "medmcqa", "train")
    assert (error.line, error.field) == (1, "text")
    row = {"text": "Question: Q?\n Choices: (A) a; (B) b; (C) c; (D) d", "label": "(E)"}
    _write(tmp_path, "medmcqa/MedMCQA_train_4000.json", _jsonl(row))
    assert _error(tmp_path, "medmcqa", "train").field == "label"
