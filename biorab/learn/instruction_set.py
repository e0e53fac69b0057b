"""Retrieval-augmented instruction sets: a dataset's training split rendered exactly as `biorab run` renders
its prompts (same template, same retriever, same `render_examples`), plus the gold response.

The original built its training containers with the same retrieval as its test containers, so every
training instance retrieved itself (4000 of 4000 Hetionet examples). Here an instance's own id and own text
are removed from its hits before the top k are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from biorab.common.errors import DataError
from biorab.common.records import Example, Hit
from biorab.corpora.corpus import Corpus, Ledger
from biorab.learn.config import TrainingSource
from biorab.learn.records import InstructionRecord
from biorab.ral.parts.retriever import CachedRetriever
from biorab.retrieval.selection import Selection
from biorab.tasks import get_task

if TYPE_CHECKING:
    from biorab.ral.parts.assembly import RALParts

# Extra candidates fetched so that k hits remain after an instance's own item (and its copies) is dropped.
SELF_MARGIN = 4


@dataclass(frozen=True)
class InstructionSet:
    """The rendered records and what they were built from."""

    source: TrainingSource
    records: tuple[InstructionRecord, ...]
    corpus_digest: str | None


def exclude_self(example: Example, hits: Sequence[Hit], k: int) -> tuple[Hit, ...]:
    """The first `k` hits that are not `example` itself (same id, or the same input text).

    >>> ex = Example("d/train/0", "classification", "d", "train", "Aspirin caused rash.", "1")
    >>> hits = [Hit("d/train/0", 9.0, 0, "Aspirin caused rash.", "1"), Hit("d/train/5", 8.0, 1, "x", "0")]
    >>> [h.doc_id for h in exclude_self(ex, hits, 1)]
    ['d/train/5']
    """
    kept = [h for h in hits if h.doc_id != example.id and h.key.strip() != example.text.strip()]
    return tuple(kept[:k])


def load_examples(source: TrainingSource) -> list[Example]:
    """The source's instances; none is a `DataError` naming the dataset and split."""
    from biorab.datasets import load_dataset

    examples = load_dataset(source.dataset, source.split, data_dir=source.data_dir)[: source.limit]
    if not examples:
        raise DataError(
            f"dataset {source.dataset!r} split {source.split!r} has no instances to train on",
            field="training.dataset",
        )
    return examples


def build_testbed(source: TrainingSource) -> tuple[Corpus, Ledger]:
    """The source's testbed corpus and its corruption ledger (`RALParts.testbed`: the corpus its retriever
    indexes, built once per process)."""
    return source_parts(source).testbed()


def source_parts(source: TrainingSource) -> RALParts:
    """The RAL parts of the source's setting (`biorab.ral.assemble` of `TrainingSource.retrieval`, as
    `biorab run` assembles a cell and Serve its app): the template its prompts are rendered with, the
    testbed corpus and the retriever its hits come from."""
    from biorab.ral import assemble

    return assemble(dataset=source.dataset, retrieval=source.retrieval, seed=source.seed,
                    data_dir=source.data_dir)


def index_corpus(source: TrainingSource, corpus: Corpus, part: Any = None,
                 parts: RALParts | None = None) -> CachedRetriever:
    """The RAL core's retriever over the source's testbed `corpus` (`RALParts.retriever` of the source's
    `parts`, default `source_parts`), fetching `SELF_MARGIN` extra candidates per query; `part`: a corpus
    hook keeping one side of it (`biorab.learn.holdout`), whose result `corpus` then is."""
    parts = parts or source_parts(source)
    retriever = parts.retriever(selection=Selection(k=source.k + SELF_MARGIN, keep_ties=False), part=part)
    if retriever is None or retriever.corpus_digest != corpus.digest:  # the same corpus, or a wrong index
        raise DataError(f"the {source.testbed} corpus of {source.dataset!r} indexed for training is not the "
                        "one its examples were drawn from", field="training.testbed")
    return retriever


def retrieve_without_self(
    retriever: CachedRetriever, examples: Sequence[Example], k: int
) -> dict[str, tuple[Hit, ...]]:
    """Each instance's top `k` hits (`biorab.ral.parts.steps.retrieve`, the step of every RAL), its own item
    excluded."""
    from biorab.ral import retrieve

    found = retrieve(retriever, {ex.id: ex.text for ex in examples})
    return {ex.id: exclude_self(ex, found[ex.id].hits, k) for ex in examples}


def check_label_space(examples: Sequence[Example], template: object, source: TrainingSource) -> None:
    """Fail before training when the data's labels do not fit the template's label set."""
    labels: tuple[str, ...] = getattr(template, "labels", ())
    task: str = getattr(template, "task", "")
    if not labels or not get_task(task).labels_fixed:
        return  # labels that vary per instance (QA options); triples are checked in `format_target`
    bad = sorted({ex.label for ex in examples if ex.label not in labels})
    if bad:
        raise DataError(
            f"dataset {source.dataset!r} ({source.split}) has labels {bad[:5]} outside the label set "
            f"{list(labels)} of template {source.dataset}/{source.template}; pick the template of this "
            "dataset or relabel the data",
            field="label",
        )


def build_instruction_set(source: TrainingSource) -> InstructionSet:
    """Render every training instance of `source` with its retrieved examples and gold target."""
    from biorab.tasks import render_training

    examples = load_examples(source)
    parts = source_parts(source)
    template = parts.template
    check_label_space(examples, template, source)
    hits: dict[str, tuple[Hit, ...]] = {ex.id: () for ex in examples}
    digest = None
    if source.testbed != "none":
        corpus, _ledger = parts.testbed()
        hits = retrieve_without_self(index_corpus(source, corpus, parts=parts), examples, source.k)
        digest = corpus.digest
    records = []
    for ex in examples:
        text = render_training(template, ex, hits[ex.id], match_inference=source.match_inference)
        target = template.format_target(ex)
        records.append(
            InstructionRecord(
                ex.id, text[: len(text) - len(target)], target, tuple(h.doc_id for h in hits[ex.id])
            )
        )
    return InstructionSet(source, tuple(records), digest)
