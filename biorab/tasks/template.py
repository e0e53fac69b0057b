"""A frozen prompt template per (dataset, variant) and the pure `render` function.

The original appends retrieved (key, value) examples **to the instruction** and puts the instance's input in
the context, then wraps both in the Alpaca inference wrapper (`biorab.tasks.wrappers`). A `Template` holds
exactly the strings that differ between datasets and retriever variants: the instruction, how one retrieved
example is written (with and without its value), what precedes and separates the examples, and how the
instance's input is written.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from biorab.common.errors import ConfigError, DataError
from biorab.common.records import Example, Hit, OutputConstraint, Prediction, Prompt
from biorab.tasks.wrappers import inference_prompt, training_prompt


class TemplateTask(Protocol):
    """What a template asks of its task type (`biorab.tasks.task_types.TaskType`): written here, so this
    module imports no task type and the task types may name `Template` without an import circle."""

    @property
    def name(self) -> str: ...

    def constraint(self, labels: Sequence[str]) -> OutputConstraint | None: ...

    def format_target(self, example: Example, labels: Sequence[str] = ()) -> str: ...

    def parse_labels(self, labels: Sequence[str], example: Example | None) -> Sequence[str]: ...

    def parse(self, text: str, *, mode: str = "robust", labels: Sequence[str] | None = None,
              options: Mapping[str, str] | None = None) -> Prediction: ...


@dataclass(frozen=True)
class Template:
    """How one dataset's instances and retrieved examples become a prompt.

    Attributes:
        dataset: the dataset (or generic task) this template is for.
        task_type: its task type (`biorab.tasks.get_task`; `task` is its registered name).
        variant: the named variant (``default``, ``bm25``, ``contriever``, ``negative_awareness``...).
        instruction: the instruction; ``{labels_tuple}`` is replaced by the label set written as a Python
            tuple (``('a', 'b')``, as the original printed it) and ``{labels_list}`` by ``a, b``.
        labels: the closed label set (for triples: the relation set; empty means open).
        context_format: the instance's input, a `str.format` pattern over ``text`` and the example's fields
            (``options_text`` is derived from ``fields["options"]``).
        example_format: one retrieved example with a value (``{key}``, ``{value}``).
        intro: what precedes the first retrieved example.
        joiner: what separates retrieved examples.
        unlabeled_format: one retrieved example whose value is ``None`` (unlabeled corpus).
        unlabeled_intro: what precedes the examples when every hit is unlabeled.
        unlabeled_joiner: what separates unlabeled examples.
        unlabeled_instruction: the instruction used when every hit is unlabeled (``None``: `instruction`).
        max_examples: how many hits are rendered (``None``: all hits given, e.g. ties kept; 0: none).
        k: the retrieval depth the original used with this variant (a hint for the caller).
        dedupe: write identical rendered examples once. The top-1 scripts de-duplicated tied examples with a
            set; the BM25 top-3 classification scripts did not (a sentence retrieved twice is shown twice).
        stop: stop sequences for the generation.
        key_pattern: optional regex (named groups) a retrieved key is matched against in full; when it
            matches, the key is rewritten with `key_format` before rendering. SemClass keys are stored in
            the authors' uniform-corpus form ("if the triple h|r|t is belong to sentence s") but the BM25
            prompts wrote "in sentence s the relationship between h and t has relation r".
        key_format: the rewrite, a `str.format` pattern over the named groups of `key_pattern`.
    """

    dataset: str
    task_type: TemplateTask
    variant: str
    instruction: str
    labels: tuple[str, ...]
    context_format: str = "{text}"
    example_format: str = "context: {key}response: {value}"
    intro: str = " Example: "
    joiner: str = " Example: "
    unlabeled_format: str = "context: {key}"
    unlabeled_intro: str = " retrieved sentence: "
    unlabeled_joiner: str = " "
    unlabeled_instruction: str | None = None
    max_examples: int | None = None
    k: int = 1
    dedupe: bool = True
    stop: tuple[str, ...] = ("\n\n", "\n###")
    key_pattern: str | None = None
    key_format: str | None = None

    @property
    def task(self) -> str:
        """The registered name of the task type (`biorab.common.registry.TASKS`)."""
        return self.task_type.name

    def base_instruction(self, *, unlabeled: bool = False) -> str:
        """The instruction with the label set filled in (no retrieved examples)."""
        text = self.unlabeled_instruction if unlabeled and self.unlabeled_instruction else self.instruction
        return text.replace("{labels_tuple}", repr(self.labels)).replace(
            "{labels_list}", ", ".join(self.labels)
        )

    def constraint(self) -> OutputConstraint | None:
        """The task's output constraint for this template's label set."""
        return self.task_type.constraint(self.labels)

    def format_target(self, example: Example) -> str:
        """The gold label as the training target (the original's ``response``); checked against `labels`."""
        return self.task_type.format_target(example, self.labels)

    def parse(self, text: str, *, mode: str = "robust", example: Example | None = None) -> Prediction:
        """Parse `text`, generated from this template, with its task and label set.

        The task picks the label set of the instance (`TaskType.parse_labels`: for QA the option letters of
        ``example.fields["options"]``, so a five-option question accepts ``(E)``); the options' texts go to
        the parser, so an answer quoting an option's text is recovered.

        >>> from biorab.tasks import get_template
        >>> get_template("hetionet").parse(" Participates.\\n\\nExample: ...").label
        'participates'
        """
        labels = self.task_type.parse_labels(self.labels, example)
        options = example.fields.get("options") if example is not None else None
        return self.task_type.parse(text, mode=mode, labels=labels,
                                    options=options if isinstance(options, Mapping) else None)


def render_examples(template: Template, hits: Sequence[Hit]) -> str:
    """The instruction followed by the retrieved examples, as the original built it.

    With `Template.dedupe`, identical rendered examples are written once (the original de-duplicated tied
    examples with a set); the order of `hits` (best first) is kept.
    """
    shown = list(hits if template.max_examples is None else hits[: template.max_examples])
    if not shown:
        return template.base_instruction()
    unlabeled = all(hit.value is None for hit in shown)
    items = [_format_hit(template, hit) for hit in shown]
    if template.dedupe:
        items = list(dict.fromkeys(items))
    if unlabeled:
        return template.base_instruction(unlabeled=True) + template.unlabeled_intro + (
            template.unlabeled_joiner.join(items)
        )
    return template.base_instruction() + template.intro + template.joiner.join(items)


def render_context(template: Template, example: Example) -> str:
    """The instance's input written with `template.context_format`; a missing field is a `DataError`."""
    values = _context_values(example)
    try:
        return template.context_format.format_map(values)
    except KeyError as e:
        raise DataError(
            f"example {example.id}: template {template.dataset}/{template.variant} needs field {e.args[0]!r}"
            f" (fields present: {', '.join(sorted(example.fields)) or 'none'})",
            line=example.source_line,
            field=str(e.args[0]),
        ) from e


def render(template: Template, example: Example, hits: Sequence[Hit]) -> Prompt:
    """Render one example and its retrieved hits (best first) into a `Prompt`. Pure.

    Args:
        template: from `biorab.tasks.get_template`.
        example: the instance; its label is never written into the prompt.
        hits: retrieved (key, value) items; a hit whose value is ``None`` is rendered as unlabeled.
    """
    _check_task(template, example)
    instruction = render_examples(template, hits)
    context = render_context(template, example)
    return Prompt(
        example_id=example.id,
        text=inference_prompt(instruction, context),
        stop=template.stop,
        constraint=template.constraint(),
    )


def render_training(
    template: Template, example: Example, hits: Sequence[Hit], *, match_inference: bool = False
) -> str:
    """The fine-tuning text for `example`: training wrapper + its gold target (for PEFT)."""
    _check_task(template, example)
    instruction = render_examples(template, hits)
    context = render_context(template, example)
    target = template.format_target(example)
    return training_prompt(instruction, context, target, match_inference=match_inference)


def _check_task(template: Template, example: Example) -> None:
    if example.task != template.task:
        raise ConfigError(
            f"template {template.dataset}/{template.variant} is for task {template.task!r}, but example "
            f"{example.id} is a {example.task!r} example; pick the template of its dataset",
            key="template",
        )


def _format_hit(template: Template, hit: Hit) -> str:
    pattern = template.unlabeled_format if hit.value is None else template.example_format
    return pattern.format_map({"key": _rewrite_key(template, hit.key), "value": hit.value})


def _rewrite_key(template: Template, key: str) -> str:
    if template.key_pattern is None or template.key_format is None:
        return key
    match = re.fullmatch(template.key_pattern, key, flags=re.DOTALL)
    return template.key_format.format_map(match.groupdict()) if match else key


def _context_values(example: Example) -> dict[str, Any]:
    values: dict[str, Any] = {name: value for name, value in example.fields.items() if name != "options"}
    values["text"] = example.text
    options = example.fields.get("options")
    if isinstance(options, Mapping):
        values["options_text"] = format_options(options)
    return values


def format_options(options: Mapping[str, Any]) -> str:
    """Answer options as the MedMCQA prompts wrote them: ``(A) x; (B) y``, in letter order.

    >>> format_options({"B": "Atrophy", "A": "Hyperplasia"})
    '(A) Hyperplasia; (B) Atrophy'
    """
    return "; ".join(f"({letter.strip('()')}) {options[letter]}" for letter in sorted(options))


def template_fields(template: Template) -> tuple[str, ...]:
    """The example fields `template.context_format` reads (for validation and docs)."""
    names = [name for _, name, _, _ in string.Formatter().parse(template.context_format) if name]
    return tuple(dict.fromkeys(names))
