"""The templates of every dataset and their named variants, and `get_template`.

Variants name the places where the original's prompt differs by retriever: ``default`` is the form of
the staged prompt files for dense retrievers (Contriever/MedCPT/Instructor), ``bm25`` the BM25 scripts' form,
``contriever`` an alias of ``default`` where they coincide, ``legacy`` the early ``7_get_instruction.py``
form (triples), ``random``/``instructor`` the Hetionet files of those names, ``noexample`` a prompt without
retrieved examples and ``negative_awareness`` the Testbed-4 instruction. Every dataset accepts ``default``,
``bm25``, ``contriever``, ``noexample`` and ``negative_awareness`` so a sweep can name one variant for all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache

from biorab.common import labels as ls
from biorab.common.errors import UnknownNameError
from biorab.tasks import instructions as wording
from biorab.tasks.scaffold import scaffold_labels
from biorab.tasks.task_types import get_task, task_names
from biorab.tasks.template import Template

COMMON_VARIANTS: tuple[str, ...] = ("default", "bm25", "contriever", "noexample", "negative_awareness")


def triple_templates(dataset: str, relations: tuple[str, ...], unlabeled: str) -> dict[str, Template]:
    # Staged ADE/GIT containers: " Excample: " before the first example, " Excample:" between tied ones.
    base = Template(
        dataset=dataset,
        task_type=get_task("triple_extraction"), variant="default", instruction=wording.TRIPLE,
        labels=relations,
        example_format="context: {key}response: {value}", intro=" Excample: ", joiner=" Excample:",
        unlabeled_format="context: {key}", unlabeled_intro=" retrieved sentence: ", unlabeled_joiner=" ",
        unlabeled_instruction=unlabeled,
    )
    return {
        "default": base,
        "contriever": replace(base, variant="contriever"),
        # 6_bm25.py: instruction + " " + "Example: " + " Excample: ".join(examples).
        "bm25": replace(base, variant="bm25", intro=" Example: ", joiner=" Excample: "),
        # 7_get_instruction.py: ". response: " and "Example: " between examples.
        "legacy": replace(base, variant="legacy", example_format="context: {key}. response: {value}",
                          intro=" Example: ", joiner="Example: "),
        "noexample": replace(base, variant="noexample", max_examples=0),
        # 9_metrics_reject_rate.py reads the example back with split('Example: context: ')/('response: ').
        "negative_awareness": replace(base, variant="negative_awareness",
                                      instruction=wording.TRIPLE_NEGATIVE_AWARENESS, intro=" Example: ",
                                      joiner=" Example: ", unlabeled_instruction=None),
    }


def link_templates(dataset: str, labels: tuple[str, ...]) -> dict[str, Template]:
    # Hetionet prompt files: contriever/instructor write " Examples: ", bm25/random " Example: ".
    dense = Template(
        dataset=dataset,
        task_type=get_task("link_prediction"), variant="default", instruction=wording.LINK_PREDICTION,
        labels=labels, example_format="Context: {key} Response: {value}", intro=" Examples: ", joiner=" ",
        unlabeled_format="Context: {key}",
    )
    sparse = replace(dense, variant="bm25", intro=" Example: ", joiner=" Example: ")
    return {
        "default": dense,
        "contriever": replace(dense, variant="contriever"),
        "instructor": replace(dense, variant="instructor"),
        "bm25": sparse,
        "random": replace(sparse, variant="random"),
        "noexample": replace(dense, variant="noexample", max_examples=0),
        "negative_awareness": replace(dense, variant="negative_awareness",
                                      instruction=wording.LINK_PREDICTION + wording.NOISE_SENTENCE),
    }


def _ade_corpus_v2() -> dict[str, Template]:
    dense = Template(
        dataset="ade_corpus_v2",
        task_type=get_task("classification"), variant="default",
        instruction=wording.ADE_CLASSIFICATION,
        labels=ls.ADE_CORPUS_V2_LABELS,
        example_format="context: {key} Is the adverse drug event mentioned in the text? response: {value}",
        intro=" Example: ", joiner=" Example: ", unlabeled_format="{key}",
    )
    bm25 = replace(dense, variant="bm25", context_format=wording.ADE_BM25_CONTEXT, intro="Example: ",
                   joiner="\nExample: ", example_format="Context: The sentence {key} has label {value}", k=3,
                   dedupe=False)
    return _with_common(dense, bm25)


def _semclass() -> dict[str, Template]:
    # Only the BM25 form (three examples) is published; it is also the default.
    bm25 = Template(
        dataset="semclass",
        task_type=get_task("classification"), variant="bm25", instruction=wording.SEMCLASS,
        labels=ls.SEMCLASS_LABELS, context_format=wording.SEMCLASS_CONTEXT,
        example_format="Context: {key} is labeled as {value}", intro="Example: ", joiner="\nExample: ",
        unlabeled_format="{key}", k=3, dedupe=False, key_pattern=wording.SEMCLASS_KEY_PATTERN,
        key_format=wording.SEMCLASS_KEY_FORMAT,
    )
    return _with_common(replace(bm25, variant="default"), bm25)


def qa_templates(dataset: str, labels: tuple[str, ...], context_format: str) -> dict[str, Template]:
    # No MedMCQA prompt file survives: examples go after the instruction's trailing newline (ours).
    base = Template(
        dataset=dataset,
        task_type=get_task("qa"), variant="default", instruction=wording.MEDMCQA, labels=labels,
        context_format=context_format, example_format="Example: {key}\nResponse: {value}\n", intro="",
        joiner="", unlabeled_format="{key}\n", unlabeled_intro="retrieved sentence: ", unlabeled_joiner="",
    )
    return _with_common(base, replace(base, variant="bm25"))


def classification_templates(dataset: str, labels: tuple[str, ...]) -> dict[str, Template]:
    base = Template(
        dataset=dataset,
        task_type=get_task("classification"), variant="default", instruction=wording.CLASSIFICATION_GENERIC,
        labels=labels, example_format="Context: {key} Response: {value}", unlabeled_format="{key}",
    )
    return _with_common(base, replace(base, variant="bm25"))


def nli_templates(dataset: str, labels: tuple[str, ...], context_format: str) -> dict[str, Template]:
    base = Template(
        dataset=dataset,
        task_type=get_task("nli"), variant="default", instruction=wording.NLI, labels=labels,
        context_format=context_format, example_format="Context: {key} Response: {value}",
        unlabeled_format="{key}",
    )
    return _with_common(base, replace(base, variant="bm25"))


def _with_common(default: Template, bm25: Template) -> dict[str, Template]:
    return {
        "default": default,
        "contriever": replace(default, variant="contriever"),
        "bm25": bm25,
        "noexample": replace(default, variant="noexample", max_examples=0),
        "negative_awareness": replace(default, variant="negative_awareness",
                                      instruction=default.instruction + wording.NOISE_SENTENCE),
    }


def open_triple_templates(dataset: str, relations: tuple[str, ...]) -> dict[str, Template]:
    """The generic triple templates: the relation set in the instruction, or an open one without it."""
    variants = triple_templates(dataset, relations, wording.TRIPLE_UNLABELED_CHEMPROT)
    if relations:
        return variants
    return {
        name: replace(t, instruction=wording.TRIPLE_OPEN, unlabeled_instruction=None)
        for name, t in variants.items()
    }


_DATASETS: dict[str, Callable[[], dict[str, Template]]] = {
    "ade": lambda: triple_templates("ade", ls.ADE_RELATIONS, wording.TRIPLE_UNLABELED_ADE),
    "chemprot": lambda: triple_templates("chemprot", ls.CHEMPROT_RELATIONS,
                                         wording.TRIPLE_UNLABELED_CHEMPROT),
    "git": lambda: triple_templates("git", ls.GIT_RELATIONS, wording.TRIPLE_UNLABELED_GIT),
    "pharmkg": lambda: link_templates("pharmkg", ls.PHARMKG_LABELS),
    "hetionet": lambda: link_templates("hetionet", ls.HETIONET_LABELS),
    "ade_corpus_v2": _ade_corpus_v2,
    "semclass": _semclass,
    "medmcqa": lambda: qa_templates("medmcqa", ls.MEDMCQA_LABELS, wording.MEDMCQA_CONTEXT),
    "bionli": lambda: nli_templates("bionli", ls.BIONLI_LABELS, wording.NLI_CONTEXT),
}

@cache
def scaffold_markers() -> frozenset[str]:
    """The scaffold labels of every template of every dataset and of the inference wrapper
    (`biorab.tasks.scaffold.scaffold_labels`): what an answer echoing the prompt repeats.

    >>> sorted(m for m in scaffold_markers() if "sentence" in m or "excample" in m)
    ['excample:', 'retrieved sentence', 'retrieved sentence:']
    """
    return scaffold_labels(t for build in _DATASETS.values() for t in build().values())


def template_datasets() -> tuple[str, ...]:
    """Datasets with their own templates (a task name selects that task's generic template)."""
    return tuple(_DATASETS)


def template_variants(dataset: str, *, task: str | None = None) -> tuple[str, ...]:
    """The variant names `get_template(dataset, variant=...)` accepts."""
    return tuple(_variants(dataset, task, ()))


def get_template(
    dataset: str,
    *,
    variant: str = "default",
    labels: Sequence[str] | None = None,
    task: str | None = None,
) -> Template:
    """The template of `dataset` in the named variant.

    Args:
        dataset: a staged dataset (``ade``...``medmcqa``), ``bionli``, or a task name (the generic template
            of that task, for bring-your-own data); any other name needs `task`.
        variant: see the module docstring; an unknown variant raises `UnknownNameError` listing the known.
        labels: override the label set (e.g. the relation order of another Hetionet prompt file, or a
            bring-your-own dataset's labels); the instruction is rewritten with it.
        task: for a dataset without its own template, the task whose generic template to use.
    """
    variants = _variants(dataset, task, tuple(labels or ()))
    if variant not in variants:
        raise UnknownNameError(f"template variant of {dataset}", variant, variants)
    template = variants[variant]
    if labels is not None and tuple(labels) != template.labels:
        template = replace(template, labels=tuple(labels))
    return template


@cache
def _variants(dataset: str, task: str | None, labels: tuple[str, ...]) -> dict[str, Template]:
    # Templates are frozen, so one dict per (dataset, task, labels) is shared by every caller.
    if dataset in _DATASETS:
        return _DATASETS[dataset]()
    generic = task or (dataset if dataset in task_names() else None)
    if generic is None:
        known = [*_DATASETS, *task_names()]
        raise UnknownNameError("template dataset (pass task= for a bring-your-own dataset)", dataset, known)
    # The task's own template family; an unknown task name fails here, listing the registered tasks.
    return {name: replace(t, dataset=dataset) for name, t in get_task(generic).templates(labels).items()}
