"""The task type is the entry point of parsing and scoring (issue 42, item 2): a template holds its task type,
callers ask the task (`TaskType.parse`, `.score`, `.score_table`, `.compare`, `Template.parse`), and the
parsers and metrics are the machinery it hands itself to."""

from __future__ import annotations

import pickle

import pytest

from biorab.common.errors import UnknownNameError
from biorab.common.records import Prediction
from biorab.tasks import get_task, get_template, parse


def test_a_template_holds_its_task_type_and_still_compares_as_data() -> None:
    template = get_template("medmcqa")
    assert template.task_type == get_task("qa") and template.task == "qa"
    # Ray ships templates between processes: a copy is the same template, task type included.
    copy = pickle.loads(pickle.dumps(template))
    assert copy == template and hash(copy) == hash(template) and copy.task_type == get_task("qa")
    assert get_task("qa") != get_task("nli")


def test_the_task_parses_its_own_output() -> None:
    # Robust QA: the option letter of the answer. Classification, strict: the first response line must be a
    # label ("yes because" is none), robust: the label found in it.
    assert get_task("qa").parse(" (B) because\n\nQuestion: next", labels=["(A)", "(B)"]).label == "(B)"
    kind = get_task("classification")
    assert kind.parse("yes because", mode="strict_original", labels=["yes", "no"]).ok is False
    assert kind.parse("yes because", labels=["yes", "no"]).label == "yes"
    assert parse("qa", " (B) because\n\nQuestion: next", labels=["(A)", "(B)"]).label == "(B)"
    with pytest.raises(UnknownNameError, match="robust"):
        get_task("qa").parse("(A)", mode="robustt")
    with pytest.raises(UnknownNameError, match="classification"):
        parse("clasification", "yes")


def test_the_task_scores_and_compares_with_its_own_metrics() -> None:
    golds = ["a", "b", "a", "b"]
    a = [Prediction("a", "", True), Prediction("a", "", True), Prediction("a", "", True),
         Prediction(None, "", False)]
    b = [Prediction(g, "", True) for g in golds]
    kind = get_task("classification")
    report = kind.score(golds, a, n_boot=0)
    # By hand: 2 of 4 right (the unparsed one is wrong), one parse failure of four.
    assert report.metrics["accuracy"].value == 0.5 and report.parse_failures == 1
    assert report.metrics["parse_failure_rate"].value == 0.25
    table = kind.score_table(golds, a, labels=["a", "b"])
    assert list(table.correct) == [True, False, True, False]
    # The headline metric of classification is micro F1 (= accuracy here): B (all right) minus A is 0.5.
    comparison = kind.compare(golds, a, b, n_boot=0)
    assert (comparison.metric, comparison.value_a, comparison.value_b) == ("micro_f1", 0.5, 1.0)
