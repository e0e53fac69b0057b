"""The negative-awareness probe: the original's wording, with the retrieved text really inserted."""

from __future__ import annotations

from biorab.common.records import Example, Hit
from biorab.tasks import AWARENESS_LABELS, awareness_target, describe_hit, parse, render_awareness_probe

EXAMPLE = Example("ade/test/0", "triple_extraction", "ade", "test",
                  "Hepatotoxic effects in a child receiving valproate and carnitine.",
                  "carnitine|effect|Hepatotoxic effects")
HIT = Hit("ade/train/7", 0.9, 0, "Phenytoin toxicity: an easily missed cause of cerebellar syndrome.",
          "Phenytoin|dosage|cerebellar syndrome")


def test_probe_prompt_pinned() -> None:
    prompt = render_awareness_probe(EXAMPLE, HIT)
    assert prompt.text == (
        "Below is an instruction that describes a task, paired with an input that provides further context."
        "\n\n### Instruction: \nPlease determine whether the retrieved example constitutes negative "
        "information. If it is negative, please output False; if it is not negative, please output True"
        "\n\n### Input: \nif the retrieved document: (The triplet of (Phenytoin toxicity: an easily missed "
        "cause of cerebellar syndrome.) is (Phenytoin|dosage|cerebellar syndrome)) is  the negative example "
        "for (Hepatotoxic effects in a child receiving valproate and carnitine.)\n\n### Response: \n"
    )
    assert prompt.example_id == "ade/test/0" and prompt.stop == ("\n\n", "\n###")
    assert prompt.constraint is not None and prompt.constraint.choices == AWARENESS_LABELS


def test_the_missing_f_string_bug_is_fixed() -> None:
    text = render_awareness_probe(EXAMPLE, HIT).text
    assert "{sentence}" not in text and "{triplet}" not in text and "{context}" not in text
    assert HIT.key in text and HIT.value in text and EXAMPLE.text in text


def test_other_tasks_and_unlabeled_hits() -> None:
    link = Hit("h/train/1", 1.0, 0, "What is the relationship between A and B ?", "binds")
    assert describe_hit("link_prediction", link) == (
        "The relation of (What is the relationship between A and B ?) is (binds)")
    qa = Hit("m/1", 1.0, 0, "Question: q", "(B)")
    assert describe_hit("qa", qa) == "The answer of (Question: q) is ((B))"
    assert describe_hit("classification", Hit("c/1", 1.0, 0, "S.", None)) == "The retrieved sentence is (S.)"


def test_targets_and_parsing_of_probe_answers() -> None:
    assert awareness_target(is_negative=False) == "True-The retrieved example is not a negative example"
    assert awareness_target(is_negative=True) == "False-The retrieved example is a negative example"
    answer = "True-The retrieved example is not a negative example"
    # The original's exact-match rule did not count this as "True"; the robust parser does.
    assert parse("classification", answer, mode="strict_original", labels=AWARENESS_LABELS).ok is False
    assert parse("classification", answer, labels=AWARENESS_LABELS).label == "True"
    assert parse("classification", " false.", labels=AWARENESS_LABELS).label == "False"
    assert parse("classification", "False", mode="strict_original", labels=AWARENESS_LABELS).label == "False"
