"""`parse`: modes in the registry, errors for programming mistakes only, never an exception on output."""

from __future__ import annotations

import doctest
import random
from pathlib import Path

import pytest

import biorab.parsing.base
import biorab.parsing.choices
import biorab.parsing.closed_labels
import biorab.parsing.segments
import biorab.parsing.strict
import biorab.parsing.triples
import biorab.tasks.awareness_probe
import biorab.tasks.task_types
import biorab.tasks.template
import biorab.tasks.wrappers
from biorab.common.errors import UnknownNameError
from biorab.common.labels import HETIONET_LABELS, MEDMCQA_LABELS
from biorab.common.records import Prediction
from biorab.common.registry import PARSERS, TASKS
from biorab.datasets import load_dataset
from biorab.parsing import MODES
from biorab.tasks import get_template, parse

DOCTESTED = [
    biorab.parsing, biorab.parsing.base, biorab.parsing.choices, biorab.parsing.closed_labels,
    biorab.parsing.segments, biorab.parsing.strict, biorab.parsing.triples, biorab.tasks.awareness_probe,
    biorab.tasks.task_types, biorab.tasks.template, biorab.tasks.wrappers,
]


@pytest.mark.parametrize("module", DOCTESTED, ids=lambda m: m.__name__)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)  # type: ignore[arg-type]
    assert result.failed == 0 and result.attempted > 0


def test_modes_are_registered() -> None:
    assert set(MODES) <= set(PARSERS.names())
    with pytest.raises(UnknownNameError, match="strict_original"):
        parse("qa", "(A)", mode="strict")
    with pytest.raises(UnknownNameError, match="triple_extraction"):
        parse("triples", "a|b|c")


def test_non_text_output_is_a_failure_not_an_error() -> None:
    assert parse("qa", None) == Prediction(label=None, raw="", ok=False)  # type: ignore[arg-type]


_PIECES = ["a", "B", "|", "||", "\n", "\n\n", " ", "(", ")", "(A)", "Example 6:", "### Response: \n",
           "Response:", "context:", "effect", "participates", "yes", "1", "```", "**", "- ", "é", ";", ",",
           "{",
           "Below is an instruction that describes a task", "Answer: ", "\u2005", "\\", "\t"]


@pytest.mark.parametrize("mode", MODES)
def test_random_outputs_never_raise(mode: str) -> None:
    rng = random.Random(7)
    for _ in range(1500):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 25)))
        for task in TASKS.names():
            labels = {"link_prediction": HETIONET_LABELS, "qa": MEDMCQA_LABELS}.get(task, ("1", "0"))
            prediction = parse(task, text, mode=mode, labels=labels, options={"A": "a", "B": "(A)"})
            assert prediction.raw == text and prediction.ok == (prediction.label is not None)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
@pytest.mark.parametrize(
    "dataset", ["ade", "chemprot", "git", "pharmkg", "hetionet", "ade_corpus_v2", "semclass", "medmcqa"]
)
def test_a_perfect_answer_parses_to_the_gold_label(data_dir: Path, dataset: str) -> None:
    template = get_template(dataset)
    examples = load_dataset(dataset, "train", data_dir=data_dir)
    robust = [parse(template.task, e.label, labels=template.labels).label for e in examples]
    strict = [parse(template.task, e.label, mode="strict_original", labels=template.labels).label
              for e in examples]
    if template.task == "triple_extraction":
        # Robust trims entities (two ADE gold labels carry a stray space); strict lowercases.
        golds = ["|".join(part.strip() for part in e.label.split("|")) for e in examples]
        assert robust == golds
        mismatched = sum(s != e.label.lower() for s, e in zip(strict, examples, strict=True))
        assert mismatched == {"ade": 2, "chemprot": 0, "git": 0}[dataset]
    else:
        assert robust == strict == [e.label for e in examples]


def test_template_parse_uses_the_examples_options() -> None:
    from biorab.common.records import Example

    options = {"A": "a1", "B": "b1", "C": "c1", "D": "d1", "E": "None of these"}
    five = Example("qa/test/0", "qa", "medmcqa", "test", "q", "(E)", {"question": "q", "options": options})
    template = get_template("medmcqa")
    assert template.parse("(E)", example=five).label == "(E)"
    assert template.parse("(E)").label is None  # the staged set has four options
    assert template.parse("none of these", example=five).label == "(E)"
    assert get_template("ade").parse(" x | Effect | y", mode="strict_original").label == (
        "x| effect |y")
