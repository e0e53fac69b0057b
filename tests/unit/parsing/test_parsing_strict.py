"""``strict_original``: the original scripts' rules, on bare continuations and on full decoded outputs."""

from __future__ import annotations

import pytest

from biorab.common.labels import HETIONET_LABELS, MEDMCQA_LABELS, SEMCLASS_LABELS
from biorab.tasks import inference_prompt, parse

PROMPT = inference_prompt("please extract the triplet ...", "Levodopa relieves Parkinson disease.")


def strict(task: str, text: str, labels: tuple[str, ...] | None = None) -> str | None:
    return parse(task, text, mode="strict_original", labels=labels).label


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Levodopa|effect|Parkinson disease", "levodopa|effect|parkinson disease"),
        # The original kept the relation's spaces: this prediction can never match a gold "effect".
        (" Levodopa | effect | Parkinson disease\n\nExample 6: a|b|c", "levodopa| effect |parkinson disease"),
        ("Levodopa|effect|Parkinson       disease", "levodopa|effect|parkinson disease"),  # 7 spaces -> 1
        ("a|effect|b\nc|effect|d", None),  # exactly one line, or nothing
        ("a|effect|b|c", None),  # exactly three parts
        ("a|effect|b\nExplanation: because", None),
        ("", None),
        ("The answer is a drug.", None),
    ],
)
def test_triple_rule_on_bare_continuations(text: str, label: str | None) -> None:
    assert strict("triple_extraction", text) == label


def test_triple_rule_on_the_originals_decoded_output() -> None:
    # 5_metrics.py: split("\n\n")[3] is "### Response: \n<output>", which must hold exactly 2 lines.
    assert strict("triple_extraction", PROMPT + "Levodopa|effect|Parkinson disease\n\n### Explanation") == (
        "levodopa|effect|parkinson disease"
    )
    assert strict("triple_extraction", PROMPT + "a|effect|b\nc|effect|d") is None
    # An instruction containing a blank line shifts the segments: the original then reads the wrong one.
    shifted = inference_prompt("line one\n\nline two", "x") + "a|effect|b"
    assert strict("triple_extraction", shifted) is None
    assert strict("triple_extraction", "Below is an instruction that describes a task.\n\nonly two") is None


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("participates", "participates"),
        ("participates in the process\nbinds", "participates"),
        ("regulates.", None),  # "regulates." is the token and is not a label
        (" participates", None),  # split(" ")[0] of a leading space is ""
        ("Participates", None),  # case-sensitive, like sklearn on the raw strings
        ("\n\nparticipates", None),
    ],
)
def test_link_prediction_first_token(text: str, label: str | None) -> None:
    assert strict("link_prediction", text, HETIONET_LABELS) == label


def test_link_prediction_without_labels_keeps_the_token() -> None:
    assert strict("link_prediction", "Interactions between them") == "Interactions"
    assert strict("link_prediction", PROMPT + "binds\n\nExample") == "binds"


@pytest.mark.parametrize(
    ("text", "label"),
    [("(C)", "(C)"), ("The answer is (B), not (C)", "(B)"), ("C", None), ("(E)", None), ("(c)", None)],
)
def test_qa_first_parenthesised_letter(text: str, label: str | None) -> None:
    assert strict("qa", text, MEDMCQA_LABELS) == label


def test_qa_ignores_the_echoed_prompt_options() -> None:
    echoed = inference_prompt("TASK: choose (A), (B), (C), (D).", "Question: q\nAnswers: (A) x") + "(D)"
    assert strict("qa", echoed, MEDMCQA_LABELS) == "(D)"
    assert strict("qa", "(E)") == "(E)"  # without labels the letters A-E are allowed


@pytest.mark.parametrize(
    ("text", "label"), [("y", "y"), ("n\n\nExample: ...", "n"), (" y", None), ("yes", None), ("Y", None)]
)
def test_classification_exact_first_line(text: str, label: str | None) -> None:
    assert strict("classification", text, SEMCLASS_LABELS) == label
    assert strict("nli", "entailment", ("entailment", "contradiction")) == "entailment"


def test_failures_keep_the_raw_text() -> None:
    prediction = parse("triple_extraction", "no triple here", mode="strict_original")
    assert (prediction.label, prediction.raw, prediction.ok) == (None, "no triple here", False)
