"""The negative-awareness True/False probe of the paper (Testbed 4), with the original's bug fixed.

``9_metrics_reject_rate.py`` asked, for each test input, whether its retrieved example "constitutes negative
information". Its probe context was built from plain strings where f-strings were meant, so every probe
read literally ``if the retrieved document: (The triplet of ({sentence}) is ({triplet})) is  the negative
example for ({context})`` and the model never saw the retrieved text. Here the retrieved key and value and
the instance's input really are inserted; the wording is otherwise the original's (double space included).
"""

from __future__ import annotations

from biorab.records import Example, Hit, OutputConstraint, Prompt
from biorab.tasks import instructions as wording
from biorab.tasks.task_types import get_task
from biorab.tasks.wrappers import inference_prompt

#: The probe's answer meaning "the retrieved example is negative". The probe instruction (the original's,
#: verbatim) says "If it is negative, please output False; if it is not negative, please output True".
#: `biorab.metrics.negative_awareness` and the pipeline read this one definition, so probe outputs are
#: scored with the convention the probe asked for.
AWARENESS_NEGATIVE = "False"
#: The probe's answer meaning "the retrieved example is not negative".
AWARENESS_NOT_NEGATIVE = "True"
#: The probe's closed answer set.
AWARENESS_LABELS: tuple[str, ...] = (AWARENESS_NOT_NEGATIVE, AWARENESS_NEGATIVE)
#: The original generated at most 10 new tokens for the probe.
AWARENESS_MAX_TOKENS = 10

# How a retrieved (key, value) is described; the original only had the triple wording.
_DESCRIPTIONS: dict[str, str] = {
    "triple_extraction": "The triplet of ({key}) is ({value})",
    "link_prediction": "The relation of ({key}) is ({value})",
    "classification": "The label of ({key}) is ({value})",
    "qa": "The answer of ({key}) is ({value})",
    "nli": "The label of ({key}) is ({value})",
}


def describe_hit(task: str, hit: Hit) -> str:
    """The retrieved example as the probe writes it.

    >>> describe_hit("triple_extraction", Hit("d1", 1.0, 0, "Aspirin caused rash.", "Aspirin|effect|rash"))
    'The triplet of (Aspirin caused rash.) is (Aspirin|effect|rash)'
    """
    if hit.value is None:
        return f"The retrieved sentence is ({hit.key})"
    pattern = _DESCRIPTIONS.get(task, _DESCRIPTIONS["classification"])
    return pattern.format_map({"key": hit.key, "value": hit.value})


def render_awareness_probe(example: Example, hit: Hit) -> Prompt:
    """The True/False probe for one input and its retrieved example. Pure.

    Args:
        example: the test instance (its ``text`` is the input the example was retrieved for).
        hit: the retrieved (key, value) example (in Testbed 4 the value is counterfactual).

    Returns:
        A prompt whose answer is ``True`` (not negative) or ``False`` (negative); it stops at a blank line
        and carries the closed choice constraint.
    """
    context = wording.AWARENESS_CONTEXT.format_map(
        {"example": describe_hit(example.task, hit), "context": example.text}
    )
    return Prompt(
        example_id=example.id,
        text=inference_prompt(wording.AWARENESS, context),
        stop=get_task("classification").stop,
        constraint=OutputConstraint(choices=AWARENESS_LABELS),
    )


def awareness_target(is_negative: bool) -> str:
    """The probe's training target. The original wrote the "not negative" answer for every probe.

    >>> awareness_target(False)
    'True-The retrieved example is not a negative example'
    >>> awareness_target(True)
    'False-The retrieved example is a negative example'
    """
    return wording.AWARENESS_TARGET_NEGATIVE if is_negative else wording.AWARENESS_TARGET_NOT_NEGATIVE
