"""Whether a cell's template and parser fit its dataset's task, decided before launch.

A misfit never raises during a run: `biorab.parsing.parse` turns any answer it cannot read into a parse
failure, so a grid whose parser cannot read the answers its template asks for runs to the end and reports
0 accuracy after every GPU hour is spent. So for each (dataset, template variant, parser mode) of a grid:

- the template variant exists for the dataset (`biorab.tasks.get_template`);
- the template is written for the task the dataset's rows are parsed and scored as (the loader's
  ``task``, `biorab.common.registry.dataset_task`; a run's cells take it from their rows);
- the parser mode is registered (`biorab.common.registry.PARSERS`) and reads every answer the template's
  output constraint asks for as a distinct label of the label set the rows are scored with
  (`biorab.common.labels.dataset_labels`, what the parse stage is given): each choice of a closed task, one
  answer drawn from an open task's regex (`biorab.generation.regex_sample`, what the rehearsal's fake
  engine answers). Distinct, so that two answers the prompt tells apart are not scored as one;
- a cell that asks the negative-awareness probe: the parser reads each of the probe's answers
  (`biorab.tasks.AWARENESS_LABELS`) back as itself (`biorab.ral.specs.probe.parse_judgement`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import lru_cache

from biorab.common.errors import BioRABError

#: How many unread answers one problem line quotes.
QUOTED = 3


def fit_problems(dataset: str, variant: str, parser: str, *, probes: bool = False) -> list[str]:
    """Why the template `variant` and the parser `parser` do not fit `dataset`'s task (empty: they fit).
    `dataset` must be registered (an unknown one is `check_experiment`'s to name)."""
    from biorab.common.labels import dataset_labels
    from biorab.common.registry import dataset_task

    return list(_fit(dataset, variant, parser, probes, dataset_task(dataset), dataset_labels(dataset)))


@lru_cache(maxsize=4096)  # a grid asks the same (dataset, template, parser) in every run and seed
def _fit(dataset: str, variant: str, parser: str, probes: bool, task: str | None,
         labels: tuple[str, ...] | None) -> tuple[str, ...]:
    """`fit_problems`, keyed by everything it reads (the task and label set the rows are scored with)."""
    from biorab.common.registry import PARSERS
    from biorab.tasks import get_template

    try:
        template = get_template(dataset, variant=variant, task=task)
    except (BioRABError, KeyError, ValueError, NotImplementedError) as e:
        return (f"template {variant!r} does not fit dataset {dataset!r}: {e}",)
    if task is not None and template.task != task:
        return (f"template {variant!r} of dataset {dataset!r} is written for task {template.task!r}, but "
                f"the dataset's rows are {task!r} instances (parsed and scored as {task!r})",)
    if parser not in PARSERS:
        return (f"parser {parser!r} is not registered; known: {', '.join(PARSERS.names())}",)
    out = []
    unread = unread_answers(template.task, _asked(template), parser, labels)
    if unread:
        quoted = ", ".join(f"{answer!r} -> {got}" for answer, got in unread[:QUOTED])
        more = f" (and {len(unread) - QUOTED} more)" if len(unread) > QUOTED else ""
        out.append(f"parser {parser!r} does not read the answers template {variant!r} asks of dataset "
                   f"{dataset!r} ({template.task}): {quoted}{more}; every such answer would be a parse "
                   "failure")
    if probes and (unread := unread_judgements(parser)):
        quoted = ", ".join(f"{answer!r} -> {got}" for answer, got in unread)
        out.append(f"parser {parser!r} does not read the negative-awareness probe's answers of dataset "
                   f"{dataset!r}: {quoted}")
    return tuple(out)


def unread_answers(task: str, answers: Sequence[str], parser: str, labels: Sequence[str] | None
                   ) -> list[tuple[str, str]]:
    """The `answers` that `parser` does not read (for a closed task: as a label of `labels`), or reads as
    the same label as an earlier answer; each with what it read instead."""
    from biorab.tasks import get_task

    task_type = get_task(task)
    closed = bool(task_type.closed)
    out: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for answer in answers:
        prediction = task_type.parse(answer, mode=parser, labels=labels)
        if not prediction.ok or (closed and labels and prediction.label not in labels):
            got = "a parse failure" if not prediction.ok else f"{prediction.label!r}, no label"
            out.append((answer, got))
        elif prediction.label in seen:
            out.append((answer, f"{prediction.label!r}, as {seen[prediction.label]!r}"))
        else:
            seen[str(prediction.label)] = answer
    return out


def unread_judgements(parser: str) -> list[tuple[str, str]]:
    """The probe's answers that `parser` does not read back as themselves."""
    from biorab.ral.specs.probe import parse_judgement
    from biorab.tasks import AWARENESS_LABELS

    read = {label: parse_judgement(label, parser) for label in AWARENESS_LABELS}
    return [(label, repr(got)) for label, got in read.items() if got != label]


def _asked(template: object) -> list[str]:
    """The answers the template's output constraint asks for: every choice, or one answer drawn from its
    regex (its first line when that alone is an answer: the strict rules read one line)."""
    from biorab.generation.regex_sample import sample_regex

    constraint = template.constraint()  # type: ignore[attr-defined]
    if constraint is None:
        return []
    if constraint.choices:
        return list(constraint.choices)
    if not constraint.regex:
        return []
    drawn = sample_regex(constraint.regex, random.Random(0))
    first = drawn.split("\n", 1)[0]
    return [first if re.fullmatch(constraint.regex, first) else drawn]
