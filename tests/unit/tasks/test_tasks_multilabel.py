"""The bring-your-own multi-label task (biorab/tasks/multilabel.py), end to end on a small SDoH-like set:
a CSV loaded through `byo`, its template, parser, metrics, counterfactual corpus and error types."""

from __future__ import annotations

import doctest
import random
from pathlib import Path

import pytest

import biorab.tasks.multilabel
from biorab.common.errors import DataError
from biorab.common.records import Example, Hit, Prediction
from biorab.common.registry import TASKS
from biorab.corpora import build_corpus
from biorab.datasets import load_dataset
from biorab.datasets.stats import label_counts
from biorab.metrics import score
from biorab.metrics.definitions import display_name
from biorab.tasks import get_task, get_template, parse, render, single_label

TASK = "multilabel_classification"
LABELS = ("housing", "employment", "transportation", "food")
ROWS = (
    "note_id,note,sdoh\n"
    'n1,"Evicted last month, lost his job.",housing;employment\n'
    "n2,No car; misses appointments.,transportation\n"
    'n3,"Skips meals, no bus fare.",food; transportation\n'
    "n4,Lives in a shelter.,housing\n"
)


def _load(tmp_path: Path, split: str = "train", labels: tuple[str, ...] | None = LABELS) -> list[Example]:
    (tmp_path / "sdoh").mkdir(exist_ok=True)
    (tmp_path / "sdoh" / f"{split}.csv").write_text(ROWS, encoding="utf-8")
    params = {"name": "sdoh", "task": TASK, "files": {split: f"sdoh/{split}.csv"},
              "fields": {"text": "note", "label": "sdoh", "id": "note_id"}}
    if labels is not None:
        params["labels"] = list(labels)
    return load_dataset("byo", split, data_dir=tmp_path, params=params)


def test_registered_by_one_line() -> None:
    assert TASK in TASKS.names()
    kind = get_task(TASK)
    assert (kind.closed, kind.labels_fixed, kind.headline, kind.row_form) == (False, False, "f1", "text")


def test_byo_rows_load_and_each_label_is_checked(tmp_path: Path) -> None:
    examples = _load(tmp_path)
    assert [(e.id, e.task, e.label) for e in examples] == [
        ("sdoh/train/0", TASK, "housing;employment"), ("sdoh/train/1", TASK, "transportation"),
        ("sdoh/train/2", TASK, "food; transportation"), ("sdoh/train/3", TASK, "housing"),
    ]
    assert label_counts(examples) == {"housing": 2, "transportation": 2, "employment": 1, "food": 1}
    with pytest.raises(DataError, match="label 'food' is not in the sdoh label set"):
        _load(tmp_path, labels=("housing", "employment", "transportation"))


def test_template_prompt_and_constraint(tmp_path: Path) -> None:
    example = _load(tmp_path)[0]
    template = get_template("sdoh", task=TASK, labels=LABELS)
    assert template.task == TASK and template.dataset == "sdoh"
    prompt = render(template, example, [Hit("d1", 1.0, 0, "Lives in a shelter.", "housing")])
    assert "every label that applies, the labels must be in ('housing', 'employment', 'transportation', " \
           "'food'). Write the labels separated by semicolons." in prompt.text
    assert "Context: Lives in a shelter. Response: housing" in prompt.text
    assert "Evicted last month, lost his job." in prompt.text
    assert prompt.constraint is not None and prompt.constraint.choices is None
    assert prompt.constraint.regex == (
        "(?:housing|employment|transportation|food)(?:; (?:housing|employment|transportation|food))*"
    )
    assert template.format_target(example) == "housing; employment"
    assert get_template("sdoh", task=TASK, labels=LABELS, variant="noexample").max_examples == 0


@pytest.mark.parametrize(
    ("text", "robust", "strict"),
    [
        ("employment; housing", "housing; employment", "housing; employment"),
        (" Housing and Employment.\n\nExample: Context: x Response: food", "housing; employment", None),
        ("**Labels:** transportation", "transportation", None),
        ("food;food", "food", "food"),
        ("none of these", None, None),
        ("", None, None),
    ],
)
def test_parsing(text: str, robust: str | None, strict: str | None) -> None:
    assert parse(TASK, text, labels=LABELS).label == robust
    assert parse(TASK, text, mode="strict_original", labels=LABELS).label == strict


def test_template_parse_uses_the_template_labels() -> None:
    template = get_template("sdoh", task=TASK, labels=LABELS)
    assert template.parse("I think: Food, transportation").label == "transportation; food"


def test_metrics_hand_computed() -> None:
    golds = ["housing; employment", "food", "housing"]
    predictions = [Prediction("housing", "x", True), Prediction("food; housing", "x", True),
                   Prediction(None, "x", False)]
    report = score(get_task(TASK), golds, predictions, n_boot=0)
    # correct 1 + 1 + 0 = 2; predicted 1 + 2 + 0 = 3; gold 2 + 1 + 1 = 4
    values = {name: m.value for name, m in report.metrics.items()}
    assert values == pytest.approx({"precision": 2 / 3, "recall": 1 / 2, "f1": 4 / 7,
                                    "parse_failure_rate": 1 / 3})
    assert display_name(single_label(TASK), "f1") == "f1"  # not single-label: micro F1 is no accuracy


def test_counterfactual_corpus_always_changes_the_label_set(tmp_path: Path) -> None:
    examples = _load(tmp_path)
    corpus, ledger = build_corpus("counterfactual", "sdoh", rate=1.0, seed=3, loader=lambda name: examples)
    kind = get_task(TASK)
    assert len(ledger.entries) == 4
    for entry in ledger.entries:
        assert kind.answer_items(entry.corrupted) != kind.answer_items(entry.original)
        assert kind.answer_items(entry.corrupted) <= set(LABELS)
    again, _ = build_corpus("counterfactual", "sdoh", rate=1.0, seed=3, loader=lambda name: examples)
    assert [i.value for i in again.items] == [i.value for i in corpus.items]
    # one label swapped for an absent one
    wrong, how = kind.wrong_label(examples[0], kind.label_space("sdoh", examples), random.Random(0))
    assert how == "swap" and len(kind.answer_items(wrong) & {"housing", "employment"}) == 1


def test_counterfactual_of_an_item_with_every_label_drops_one() -> None:
    kind = get_task(TASK)
    item = Example("s/train/0", TASK, "s", "train", "t", "a; b")
    space = kind.label_space("s", [item])
    assert space.labels == ("a", "b")
    wrong, how = kind.wrong_label(item, space, random.Random(0))
    assert how == "drop" and wrong in ("a", "b")
    with pytest.raises(DataError, match="has no wrong label"):
        kind.wrong_label(Example("s/train/1", TASK, "s", "train", "t", "a"), kind.label_space("s", [
            Example("s/train/1", TASK, "s", "train", "t", "a")]), random.Random(0))


def test_answer_items_and_error_types() -> None:
    kind = get_task(TASK)
    assert kind.answer_items("food; housing") == kind.answer_items("housing;food") == {"food", "housing"}
    assert kind.answer_items(None) == frozenset()
    assert kind.error_types("housing", "housing; employment") == {"missing_label": 1, "extra_label": 0}
    assert kind.error_types("food; housing; transportation", "housing") == {"missing_label": 0,
                                                                             "extra_label": 2}
    assert kind.error_types(None, "food") == {"missing_label": 1, "extra_label": 0}


def test_doctests() -> None:
    result = doctest.testmod(biorab.tasks.multilabel)
    assert result.attempted > 0 and result.failed == 0
