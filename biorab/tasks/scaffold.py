"""The scaffold of a prompt: the labels it writes before a piece of text (``context:``, ``response:``,
``retrieved sentence:``, ``### input:``...), and whether an answer echoes them or a retrieved sentence (the
BioRAB paper's Table 7 "redundant information"; `biorab.tasks.triple_errors`,
`biorab.tasks.TaskType.error_types`).

Read from templates (`Template`'s scaffold fields) and from the inference wrapper, so a new template's
labels are known too. Pure: it imports no task module (the task types call it)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Any

from biorab.tasks.wrappers import inference_prompt

#: The template fields that hold scaffold (what a prompt writes around the instance and its evidence).
SCAFFOLD_FIELDS = ("example_format", "intro", "joiner", "unlabeled_format", "unlabeled_intro")


def scaffold_labels(templates: Iterable[Any]) -> frozenset[str]:
    """Every label the `templates` and the inference wrapper write before a piece of text, lower-cased; a
    label of two or more words also without its colon (distinctive without it: Table 7's BioNLI answer
    "negative retrieved sentence.."); a one-word label ("context") counts only with its colon.

    >>> from biorab.tasks.template_catalog import get_template
    >>> sorted(scaffold_labels([get_template("bionli")]))  # doctest: +NORMALIZE_WHITESPACE
    ['### input', '### input:', '### instruction', '### instruction:', '### response', '### response:',
     'context:', 'example:', 'response:', 'retrieved sentence', 'retrieved sentence:']
    """
    texts = [getattr(t, name) for t in templates for name in SCAFFOLD_FIELDS]
    texts.append(inference_prompt("x", "y"))
    labels = {m.strip() for text in texts for m in re.findall(r"(?:### )?[a-z][a-z ]*:", text.lower())}
    return frozenset(labels | {label[:-1] for label in labels if " " in label})


def echoes_prompt(text: str, markers: Collection[str], echoes: Collection[str] = ()) -> bool:
    """`text` (lower-cased) repeats one of `markers` or holds a whole one of `echoes` (normalized
    retrieved sentences).

    >>> echoes_prompt("negative retrieved sentence..", {"retrieved sentence"}), echoes_prompt("no", {"x:"})
    (True, False)
    """
    return any(m in text for m in markers) or any(e and e in text for e in echoes)
