"""What a task type is: the `TaskType` base class, and `get_task`.

A task type owns everything that depends on what an answer looks like, so generic code asks the task and
never branches on its name:

- its label space: whether the answer is one label of a closed list (`closed`), whether every gold label
  lies in the template's list (`labels_fixed`), the label set an instance is parsed with (`parse_labels`),
  the names of its label space a gold label uses (`label_names`: label frequencies, bring-your-own checks);
- its template family (`templates`: the generic templates of a bring-your-own dataset of this task),
  its output constraint (`constraint`), stop sequences and training target (`format_target`);
- its parser, one rule per parser mode (`parse_robust`, `parse_strict`), and the entry point that runs it
  (`parse`: `biorab.parsing` is the machinery it calls, and never looks a task up);
- its metrics (`metrics`, in report order; `headline`, the paper's Table 1 metric), the instance table
  they read (`instance_table`), and the entry points that score with them (`score_table`, `score`,
  `compare`: `biorab.metrics` is the machinery, handed the task type, never reading the registry);
- its corruption rule (`label_space`, `wrong_label`: how a counterfactual changes its label);
- its answers as item sets (`answer_items`) and error types (`error_types`);
- how people and the probe name it (`title`, `hit_description`) and how a bring-your-own row becomes an
  instance of it (`row_form`, a converter of `biorab.datasets.byo_tasks`).

Callers that hold only a task's name ask it here, by name (`parse`, `single_label`, `TASK_METRICS`,
`PRIMARY_METRIC`): the one place below the commands that reads the task registry.

The base class is a closed-label task (one label of a list); each task type is one module of this package
registered by one line in `biorab.common.registry.TASKS` (``"module:Class"``, imported on first use). The base
imports the parsing and metrics helpers inside its methods: this module is imported wherever a
template is, and stays light until a task is used (the task modules import them at the top).
Dataset-specific wording lives in the templates (`biorab.tasks.template_catalog`), not here.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from biorab.common.errors import DataError
from biorab.common.labels import LABELS
from biorab.common.records import Example, OutputConstraint, Prediction
from biorab.common.registry import TASKS

if TYPE_CHECKING:
    from biorab.tasks.template import Template

#: The metrics of a closed-label task, in report order.
LABEL_METRICS: tuple[str, ...] = (
    "accuracy",
    # The same names as for triples, so every task's report has `f1` (here = micro F1 = accuracy).
    "precision", "recall", "f1",
    "micro_precision", "micro_recall", "micro_f1",
    "macro_precision", "macro_recall", "macro_f1",
    "weighted_precision", "weighted_recall", "weighted_f1",
    "parse_failure_rate", "auroc", "auprc",
)  # fmt: skip


@dataclass(frozen=True)
class LabelSpace:
    """What the wrong labels of one training set (a counterfactual corpus) may be drawn from.

    Attributes:
        task: the task name.
        labels: the closed label set (link prediction, classification, QA, NLI); empty for triples.
        relations: the relation set (triple extraction).
        tails: distinct tails of the training triples, sorted (the "other items" tails come from).
    """

    task: str
    labels: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    tails: tuple[str, ...] = ()


def pick_other(example: Example, labels: Sequence[str], rng: random.Random) -> str:
    """A label of `labels` other than `example`'s (its label must be one of them)."""
    if example.label not in labels:
        raise DataError(
            f"label {example.label!r} of item {example.id} is not in the label set {list(labels)}",
            line=example.source_line,
            field="label",
        )
    others = [label for label in labels if label != example.label]
    if not others:
        raise DataError(f"item {example.id}: the label set {list(labels)} has no wrong label", field="label")
    return rng.choice(others)


class TaskType:
    """Base class: a closed-label task. Subclasses set `name`, `title`, `hit_description`, `row_form` and
    override what differs."""

    name: ClassVar[str]
    #: How prompts and reports name the task ("text classification").
    title: ClassVar[str]
    #: How the awareness probe writes a retrieved (key, value) of this task.
    hit_description: ClassVar[str] = "The label of ({key}) is ({value})"
    #: The bring-your-own row converter (`biorab.datasets.byo_tasks.RowConverter`) this task's rows use.
    row_form: ClassVar[str] = "text"
    #: True when the answer is one label of a closed list (used as `OutputConstraint.choices`): one gold and
    #: one predicted label per instance, so micro precision = recall = F1 = accuracy.
    closed: ClassVar[bool] = True
    #: True when every gold label must be one of the template's labels (checked before training).
    labels_fixed: ClassVar[bool] = True
    #: True when an answer item means the same in every instance (a class, a relation, a triple), so a
    #: retrieved item's label can hold (support) this instance's item: the judge-free claim diagnostics
    #: (`biorab.diagnostics`) are computed only for such tasks.
    items_shared: ClassVar[bool] = True
    #: What the plausible (near/far) counterfactuals measure confusability on (`biorab.corpora.plausibility`):
    #: ``label_texts``, the bags of words of the training texts carrying each label; ``option_texts``, the
    #: instance's option texts; ``relation_tails``, the training triples' tails per relation; ``None``: the
    #: task has no plausibility rule. `plausible_how` is the ledger's ``how`` of such a lie.
    confusability: ClassVar[str | None] = "label_texts"
    plausible_how: ClassVar[str] = "other_class"
    #: The answer ends at a blank line or a new ``###`` section: small models keep writing the next example
    #: after it. Not at "\n": the original wrapper ends with "### Response: \n" and SmolLM2 often starts
    #: its answer with a newline, which a "\n" stop cuts to nothing (12 of 15 single-label prompts in a
    #: probe run, see docs/tasks_and_parsing.md).
    stop: ClassVar[tuple[str, ...]] = ("\n\n", "\n###")
    #: The metric names of `biorab.common.registry.METRICS` reported for this task, in report order.
    metrics: ClassVar[tuple[str, ...]] = LABEL_METRICS
    #: The headline metric (the paper's Table 1: micro F1; macro F1 for QA and NLI).
    headline: ClassVar[str] = "micro_f1"

    # A task type holds no state (every fact is on its class): two instances of one type are the same task,
    # so templates holding their task type compare and hash as before.
    def __eq__(self, other: object) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))

    # ---- prompts

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        """The generic templates (by variant) of a bring-your-own dataset of this task with `labels`."""
        raise NotImplementedError(f"task {self.name!r} has no generic template")

    def constraint(self, labels: Sequence[str]) -> OutputConstraint | None:
        """The structured-output constraint for a label set (``None`` when the set is empty)."""
        return OutputConstraint(choices=tuple(labels)) if labels else None

    def format_target(self, example: Example, labels: Sequence[str] = ()) -> str:
        """The gold label written as a training target; a label outside `labels` is a `DataError`."""
        if labels and example.label not in labels:
            raise DataError(
                f"example {example.id}: label {example.label!r} is not one of {', '.join(labels)}",
                line=example.source_line,
                field="label",
            )
        return example.label

    # ---- parsing

    def parse(self, text: str, *, mode: str = "robust", labels: Sequence[str] | None = None,
              options: Mapping[str, str] | None = None) -> Prediction:
        """Parse one model output of this task in `mode` (``robust`` or ``strict_original``) with this
        task's rule (`biorab.parsing.parse_with`); never raises on `text`.

        >>> get_task("qa").parse(" (B) Hyperophy\\n\\nQuestion: next one", labels=["(A)", "(B)"]).label
        '(B)'
        >>> get_task("classification").parse("maybe", labels=["1", "0"])
        Prediction(label=None, raw='maybe', ok=False, scores=None)
        """
        from biorab.parsing import parse_with

        return parse_with(self, text, mode=mode, labels=labels, options=options)

    def parse_labels(self, labels: Sequence[str], example: Example | None) -> Sequence[str]:
        """The label set to parse `example`'s output with (the template's `labels`, unless the instance
        brings its own)."""
        return labels

    def parse_robust(
        self, text: str, labels: Sequence[str] | None, options: Mapping[str, str] | None
    ) -> Prediction:
        """The ``robust`` mode's rule: a label of `labels` found in the answer (synonyms mapped), or without
        labels the answer's first line."""
        from biorab.parsing.base import failure, success
        from biorab.parsing.closed_labels import open_answer, parse_label

        answer = parse_label(text, labels) if labels else open_answer(text, first_word=False)
        return success(answer, text) if answer else failure(text)

    def parse_strict(self, text: str, labels: Sequence[str] | None) -> Prediction:
        """The ``strict_original`` mode's rule: the first response line, equal to a label."""
        from biorab.parsing.strict import strict_exact_line

        return strict_exact_line(text, labels)

    # ---- metrics

    def score_table(self, golds: Sequence[str], predictions: Sequence[Prediction], *,
                    labels: Sequence[str] | None = None, triple_matching: str = "normalized") -> Any:
        """`instance_table`, validated (aligned inputs, at least one instance): `biorab.metrics.tables`."""
        from biorab.metrics.tables import instance_table

        return instance_table(self, golds, predictions, labels=labels, triple_matching=triple_matching)

    def score(self, golds: Sequence[str], predictions: Sequence[Prediction], **options: Any) -> Any:
        """Every metric of this task with bootstrap intervals (`biorab.metrics.score`; `options`: its
        keywords), a `biorab.metrics.ScoreReport`."""
        from biorab.metrics.task_scoring import score

        return score(self, golds, predictions, **options)

    def compare(self, golds: Sequence[str], predictions_a: Sequence[Prediction],
                predictions_b: Sequence[Prediction], **options: Any) -> Any:
        """System B against system A on the same instances (`biorab.metrics.compare`; `options`: its
        keywords), a `biorab.metrics.PairedComparison`."""
        from biorab.metrics.paired import compare

        return compare(self, golds, predictions_a, predictions_b, **options)

    def instance_table(
        self, golds: Sequence[str], predictions: Sequence[Prediction], labels: Sequence[str] | None,
        triple_matching: str,
    ) -> Any:
        """The table this task's metrics read (`biorab.metrics.confusion.LabelTable`)."""
        from biorab.metrics.tables import label_instance_table, resolve_labels

        return label_instance_table(golds, predictions, resolve_labels(golds, labels))

    def gold_error(self, gold: str, labels: Sequence[str] | None) -> str | None:
        """Why `gold` cannot be scored against `labels` (``None``: it can)."""
        if labels is not None and gold not in labels:
            return f"gold label {gold!r} is not in the label set {list(labels)}"
        return None

    def label_names(self, label: str) -> list[str]:
        """The names of the label space a gold label uses (a label-frequency table counts them, a
        bring-your-own row's label is checked name by name): the label itself."""
        return [label]

    # ---- answers as item sets, error types

    def answer_items(self, label: str | None) -> frozenset[str]:
        """The answer as a set of normalized items: the one canonical label, as the label metrics compare it
        (exactly); the empty set for an empty or unparsed (``None``) label.

        >>> get_task("classification").answer_items("True"), get_task("classification").answer_items(None)
        (frozenset({'True'}), frozenset())
        """
        return frozenset({label}) if label else frozenset()

    def evidence_items(self, label: str | None) -> frozenset[str]:
        """A retrieved hit's label as answer items (`answer_items`), or, when the task cannot read it as
        items (a corpus method's malformed triple), the label as one item of its own: evidence is compared,
        never dropped and never an error (attribution and the claim diagnostics both read hits so;
        tests/unit/diagnostics/test_claim_diagnostics.py, a triple hit labelled ``y``)."""
        try:
            return self.answer_items(label)
        except ValueError:
            return frozenset({label}) if label else frozenset()

    #: ``paper``: an error type the BioRAB paper names (§2.8, Table 7); ``ours``: the project's own.
    error_type_origin: ClassVar[Mapping[str, str]] = {"echoed_scaffold": "paper", "error_generation": "paper"}

    def error_types(self, predicted: str | None, gold: str, *, raw: str | None = None,
                    echoes: Collection[str] = ()) -> dict[str, int]:
        """The paper's Table 7 types for one closed-label answer (every type present, zeros included):
        ``echoed_scaffold`` when the answer text `raw` repeats a scaffold label of the task's templates
        (`biorab.tasks.scaffold.scaffold_labels` of `templates`) or a whole retrieved sentence (`echoes`),
        right label or not (Table 7's BioNLI "negative retrieved sentence.." for ``negative``); else
        ``error_generation`` when the predicted label differs from the gold one (an unparsed prediction,
        ``None`` or empty, included; Table 7's BioNLI ``negative`` for ``positive``).

        >>> get_task("nli").error_types("negative", "negative", raw="negative retrieved sentence..")
        {'echoed_scaffold': 1, 'error_generation': 0}
        >>> get_task("qa").error_types("(B)", "(A)"), get_task("qa").error_types("(A)", "(A)")
        ({'echoed_scaffold': 0, 'error_generation': 1}, {'echoed_scaffold': 0, 'error_generation': 0})
        """
        from biorab.metrics.triples import normalize_element
        from biorab.tasks.scaffold import echoes_prompt, scaffold_labels

        markers = scaffold_labels(self.templates(()).values())
        echo = echoes_prompt(normalize_element(raw or ""), markers, [normalize_element(e) for e in echoes])
        wrong = self.answer_items(predicted) != self.answer_items(gold)
        return {"echoed_scaffold": int(echo), "error_generation": int(wrong and not echo)}

    # ---- counterfactuals

    def label_space(self, dataset: str, examples: Sequence[Example]) -> LabelSpace:
        """What wrong labels of `dataset`'s training items are drawn from: `biorab.common.labels` when it
        knows
        the
        dataset, else the labels seen in `examples` (bring-your-own datasets), sorted."""
        labels = LABELS.get(dataset) or tuple(sorted({example.label for example in examples}))
        return LabelSpace(task=self.name, labels=labels)

    def wrong_label(self, example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
        """A wrong label for `example` and how it was made: another class of the label space."""
        return pick_other(example, space.labels, rng), "other_class"


def get_task(name: str) -> TaskType:
    """The task type registered as `name` (an unknown name raises `UnknownNameError`)."""
    task: TaskType = TASKS.get(name)()
    return task


def task_names() -> tuple[str, ...]:
    """Every registered task, sorted."""
    return tuple(TASKS.names())


def parse(task: str, text: str, *, mode: str = "robust", labels: Sequence[str] | None = None,
          options: Mapping[str, str] | None = None) -> Prediction:
    """`TaskType.parse` of the task registered as `task` (an unknown task or mode raises
    `UnknownNameError`, listing the known ones).

    >>> parse("qa", " (B) Hyperophy\\n\\nQuestion: next one", labels=["(A)", "(B)", "(C)", "(D)"]).label
    '(B)'
    """
    return get_task(task).parse(text, mode=mode, labels=labels, options=options)


def single_label(task: str) -> bool:
    """True for a registered single-label task (its task type is `closed`): one gold and one predicted label
    per instance, so every instance adds one to the micro-averaged true positives or one false positive and
    one false negative; micro P = R = F1 = accuracy.

    >>> single_label("qa"), single_label("no such task")
    (True, False)
    """
    return task in TASKS and bool(TASKS.get(task).closed)


class _ByTask(Mapping[str, Any]):
    """A read-only view, task name -> one attribute of its task type, over `biorab.common.registry.TASKS` (so
    a newly registered task appears without an edit here)."""

    def __init__(self, attribute: str) -> None:
        self._attribute = attribute

    def __getitem__(self, task: str) -> Any:
        if task not in TASKS:
            raise KeyError(task)
        return getattr(TASKS.get(task), self._attribute)

    def __iter__(self) -> Iterator[str]:
        return iter(TASKS.names())

    def __len__(self) -> int:
        return len(TASKS.names())


#: The metrics of each task, in report order (`TaskType.metrics`).
TASK_METRICS: Mapping[str, tuple[str, ...]] = _ByTask("metrics")
#: The headline metric of each task in the paper's Table 1 (`TaskType.headline`: micro F1; macro F1 for QA
#: and NLI).
PRIMARY_METRIC: Mapping[str, str] = _ByTask("headline")
