"""The negative-awareness True/False probe of the paper (Testbed 4), with the original's bug fixed.

``9_metrics_reject_rate.py`` asked, for each test input, whether its retrieved example "constitutes negative
information". Its probe context was built from plain strings where f-strings were meant, so every probe
read literally ``if the retrieved document: (The triplet of ({sentence}) is ({triplet})) is  the negative
example for ({context})`` and the model never saw the retrieved text. Here the retrieved key and value and
the instance's input really are inserted; the wording is otherwise the original's (double space included).
"""

from __future__ import annotations

from biorab.common.labels import AWARENESS_LABELS, AWARENESS_NEGATIVE, AWARENESS_NOT_NEGATIVE
from biorab.common.records import Example, Hit, OutputConstraint, Prompt
from biorab.common.registry import TASKS
from biorab.tasks import instructions as wording
from biorab.tasks.task_types import TaskType, get_task
from biorab.tasks.wrappers import inference_prompt

#: The original generated at most 10 new tokens for the probe.
AWARENESS_MAX_TOKENS = 10

__all__ = [
    "AWARENESS_LABELS", "AWARENESS_MAX_TOKENS", "AWARENESS_NEGATIVE", "AWARENESS_NOT_NEGATIVE",
    "awareness_target", "describe_hit", "render_awareness_probe",
]  # fmt: skip


def describe_hit(task: str, hit: Hit) -> str:
    """The retrieved example as the probe writes it.

    The task's own wording (`TaskType.hit_description`; the original only had the triple wording), the
    closed-label one for a task that is not registered.

    >>> describe_hit("qa", Hit("d1", 1.0, 0, "Question: ...", "(A)"))
    'The answer of (Question: ...) is ((A))'
    """
    if hit.value is None:
        return f"The retrieved sentence is ({hit.key})"
    pattern = get_task(task).hit_description if task in TASKS else TaskType.hit_description
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
