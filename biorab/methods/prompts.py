"""The prompts of Detect-and-Correct (paper §4.3.1) and LLM labeling (§4.3.2), one per corpus item.

The paper quotes one sentence per method, for text classification only; the original code is not public
(docs/methods.md). We keep the quoted sentence verbatim, name the item's task in it, add the dataset's own
task instruction (so the model knows the label set and its meaning) and one answer-format line, and wrap it
in the Alpaca inference format the task prompts use. Every choice beyond the quoted sentence is listed in
docs/methods.md ("Prompts").
"""

from __future__ import annotations

from biorab.common.records import CorpusItem, Prompt
from biorab.tasks.task_types import get_task
from biorab.tasks.template import Template
from biorab.tasks.wrappers import inference_prompt

#: Bumped whenever a prompt below changes; it enters the stored transformed corpus's key.
PROMPT_VERSION = "methods-prompts/v1"

#: §4.3.1, verbatim, with "text classification" replaced by the item's task name.
DETECT_INSTRUCTION = (
    "This is a {task} task. Please determine whether the label assigned to the input sentence is correct. "
    "If the label is incorrect, please provide the correct label."
)
DETECT_FORMAT = (
    'Answer "correct" if the label is correct, otherwise "incorrect: " followed by the correct label.'
)

#: §4.3.2, verbatim for Ade-corpus-v2 (the paper's example); other datasets get the generic form.
LABEL_INSTRUCTIONS: dict[str, str] = {
    "ade_corpus_v2": (
        "This is a text classification task aimed at determining whether a given sentence is related to an "
        "Adverse Drug Event (ADE). Please assign a label to each provided sentence to support this task"
    ),
}
LABEL_GENERIC = "This is a {task} task. Please assign a label to each provided sentence to support this task"
LABEL_FORMAT = "Answer with the label only."

#: Appended to the item id in a prompt's ``example_id`` (backends key per-item behaviour by it, e.g. the
#: fake backend's ``map`` answers); a slash as in the awareness probe's ``<id>/awareness``.
DETECT_SUFFIX = "/detect"
LABEL_SUFFIX = "/label"


def _sentence(text: str) -> str:
    """`text` ending in a full stop (some dataset instructions end without one), so the parts read apart."""
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def _task_name(template: Template) -> str:
    return get_task(template.task).title


def detect_prompt(template: Template, item: CorpusItem) -> Prompt:
    """Ask whether `item`'s value is its key's correct label, and for the correct one if not."""
    instruction = " ".join(
        [DETECT_INSTRUCTION.format(task=_task_name(template)), _sentence(template.base_instruction()),
         DETECT_FORMAT]
    )
    context = f"sentence: {item.key}\nlabel: {item.value}"
    return Prompt(example_id=item.id + DETECT_SUFFIX, text=inference_prompt(instruction, context),
                  stop=template.stop)


def label_prompt(template: Template, item: CorpusItem) -> Prompt:
    """Ask for the label of an unlabeled `item`."""
    head = LABEL_INSTRUCTIONS.get(template.dataset) or LABEL_GENERIC.format(task=_task_name(template))
    instruction = " ".join([_sentence(head), _sentence(template.base_instruction()), LABEL_FORMAT])
    text = inference_prompt(instruction, f"sentence: {item.key}")
    return Prompt(example_id=item.id + LABEL_SUFFIX, text=text, stop=template.stop,
                  constraint=template.constraint())
