"""Triple extraction: the answer is one or more ``head|relation|tail`` lines (ADE, ChemProt, GIT).

The task's label space is its relation set (open: entities are free text); its parser reads triples from
the answer (`biorab.parsing.triples`, or the original's one-line rule); its metrics are micro precision,
recall and F1 over normalized triple sets and over heads, relations and tails (`biorab.metrics.triples`);
a counterfactual changes the first triple's relation or tail; its error types are the paper's §2.8
(`biorab.tasks.triple_errors`).
"""

from __future__ import annotations

import functools
import random
import re
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, ClassVar

from biorab.common.errors import DataError
from biorab.common.labels import RELATIONS
from biorab.common.records import Example, OutputConstraint, Prediction
from biorab.metrics.tables import triple_instance_table
from biorab.metrics.triples import TripleTable, normalize_element, parse_triples
from biorab.parsing.base import failure, success
from biorab.parsing.strict import strict_triple
from biorab.parsing.triples import format_triples
from biorab.parsing.triples import parse_triples as read_triples
from biorab.tasks.task_types import LabelSpace, TaskType
from biorab.tasks.template_catalog import open_triple_templates
from biorab.tasks.triple_errors import ERROR_TYPE_ORIGIN, triple_error_types

if TYPE_CHECKING:
    from biorab.tasks.template import Template

#: Entity length bound in the triple regex. Guided decoders need a bounded pattern to terminate, and the
#: bound decides whether a small model reaches the first ``|`` within its token budget: with 200 the CPU
#: model filled 32 tokens with one rambling "head" (no triple, a parse failure). 96 still fits every gold
#: ADE and GIT entity (chars, train+test: ADE max 82, GIT max 67; ChemProt 99.9th pct 85, max 174, so
#: under 0.1% of ChemProt entities cannot be written in full).
MAX_ENTITY_CHARS = 96
TRIPLE_SEPARATOR = "|"
Triple = tuple[str, str, str]


class TripleExtraction(TaskType):
    """Extract ``head|relation|tail`` triples; several triples are written one per line."""

    name = "triple_extraction"
    confusability = "relation_tails"
    plausible_how = "tail"
    title = "triple extraction"
    hit_description = "The triplet of ({key}) is ({value})"
    row_form = "triples"
    closed = False
    # Relations are checked triple by triple in `format_target`.
    labels_fixed = False
    metrics: ClassVar[tuple[str, ...]] = (
        "precision", "recall", "f1",
        "head_precision", "head_recall", "head_f1",
        "relation_precision", "relation_recall", "relation_f1",
        "tail_precision", "tail_recall", "tail_f1",
        "parse_failure_rate",
    )  # fmt: skip
    headline = "f1"

    def templates(self, labels: tuple[str, ...]) -> dict[str, Template]:
        return open_triple_templates(self.name, labels)

    def constraint(self, labels: Sequence[str]) -> OutputConstraint | None:
        """A regex for one or more ``head|relation|tail`` lines, the relation from `labels` when given.

        >>> TripleExtraction().constraint(["effect", "dosage"]).regex
        '[^|\\\\n]{1,96}\\\\|(?:effect|dosage)\\\\|[^|\\\\n]{1,96}(?:\\\\n[^|\\\\n]{1,96}\\\\|(?:effect|dosage)\\\\|[^|\\\\n]{1,96})*'
        """
        entity = f"[^|\\n]{{1,{MAX_ENTITY_CHARS}}}"
        relation = "(?:" + "|".join(re.escape(r) for r in labels) + ")" if labels else entity
        line = f"{entity}\\|{relation}\\|{entity}"
        return OutputConstraint(regex=f"{line}(?:\\n{line})*")

    def format_target(self, example: Example, labels: Sequence[str] = ()) -> str:
        """Each gold triple on its own line; a relation outside `labels` is a `DataError`."""
        for triple in example.label.split("\n"):
            parts = triple.split("|")
            if len(parts) != 3 or (labels and parts[1] not in labels):
                raise DataError(
                    f"example {example.id}: {triple!r} is not 'head|relation|tail'"
                    + (f" with a relation in {', '.join(labels)}" if labels else ""),
                    line=example.source_line,
                    field="label",
                )
        return example.label

    # ---- parsing

    def parse_robust(
        self, text: str, labels: Sequence[str] | None, options: Mapping[str, str] | None
    ) -> Prediction:
        """Every triple the answer holds (`biorab.parsing.triples.parse_triples`), relations mapped onto
        `labels`' spelling."""
        triples = read_triples(text, labels)
        return success(format_triples(triples), text) if triples else failure(text)

    def parse_strict(self, text: str, labels: Sequence[str] | None) -> Prediction:
        """``5_metrics.py``: exactly one ``h|r|t`` response line."""
        return strict_triple(text)

    # ---- metrics

    def instance_table(
        self, golds: Sequence[str], predictions: Sequence[Prediction], labels: Sequence[str] | None,
        triple_matching: str,
    ) -> TripleTable:
        """The triple table (`labels` are not used: the relation set only guides parsing)."""
        return triple_instance_table(golds, predictions, triple_matching)

    def gold_error(self, gold: str, labels: Sequence[str] | None) -> str | None:
        """Why `gold` is not a triple label (``None`` when every non-blank line is ``h|r|t``)."""
        try:
            _triples(gold)
        except ValueError as e:
            return str(e)
        return None

    def label_names(self, label: str) -> list[str]:
        """The relation of each triple (a label-frequency table counts relations)."""
        return [line.split("|")[1] for line in label.split("\n") if line]

    # ---- answers as item sets, error types

    def answer_items(self, label: str | None) -> frozenset[str]:
        """Each triple of the label as ``head|relation|tail``, normalized as the triple metrics normalize
        for scoring (`biorab.metrics.triples.parse_triples`: lower-cased, stripped, whitespace collapsed);
        a repeated triple counts once, an empty or unparsed (``None``) label is the empty set.

        >>> sorted(TripleExtraction().answer_items("Aspirin | effect |  Rash\\naspirin|effect|rash"))
        ['aspirin|effect|rash']

        Raises:
            ValueError: a non-blank line is not ``head|relation|tail``.
        """
        return frozenset("|".join(triple) for triple in _triples(label))

    error_type_origin: ClassVar[Mapping[str, str]] = ERROR_TYPE_ORIGIN

    def error_types(self, predicted: str | None, gold: str, *, raw: str | None = None,
                    echoes: Collection[str] = ()) -> dict[str, int]:
        """The paper's error types (§2.8, Table 7) and ours, counted for one instance with the pairing rule
        of `biorab.tasks.triple_errors` (every type present, zeros included); `echoes`: the retrieved
        sentences of the prompt (normalized here). `raw` is not read: an echo is looked for in the parsed
        triples' elements.

        >>> counts = TripleExtraction().error_types("tamoxifen|effect|retinal changes.",
        ...                                         "tamoxifen|dosage|high-dose")
        >>> {name: n for name, n in counts.items() if n}
        {'error_generation': 1}
        """
        keys = frozenset(normalize_element(e) for e in echoes)
        return triple_error_types(_triples(predicted), _triples(gold), keys)

    # ---- counterfactuals: the first triple gets a wrong relation or a wrong tail

    def label_space(self, dataset: str, examples: Sequence[Example]) -> LabelSpace:
        """The relation set (`biorab.common.labels`, else the relations seen) and the training triples'
        tails."""
        triples = [t for example in examples for t in split_triples(example)]
        relations = RELATIONS.get(dataset) or tuple(sorted({r for _, r, _ in triples}))
        tails = tuple(sorted({t for _, _, t in triples}))
        return LabelSpace(task=self.name, relations=relations, tails=tails)

    def wrong_label(self, example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
        """The first triple with a wrong relation (from the relation set) or a wrong tail (another training
        item's), with equal odds; when one kind is impossible the other is used. A replacement that
        recreates a gold triple of the same item is never chosen, and entities are compared as the scorer
        compares them, so a corrupted triple is always scored wrong."""
        triples = split_triples(example)
        gold = {_norm(t) for t in triples}
        modes = ["relation", "tail"] if rng.random() < 0.5 else ["tail", "relation"]
        for mode in modes:
            pick = _new_relation if mode == "relation" else _new_tail
            new = pick(triples[0], gold, space, rng)
            if new is not None:
                lines = [TRIPLE_SEPARATOR.join(new), *(TRIPLE_SEPARATOR.join(t) for t in triples[1:])]
                return "\n".join(lines), mode
        raise DataError(
            f"item {example.id}: no wrong relation in {list(space.relations)} and no other tail to swap in",
            line=example.source_line,
            field="label",
        )


def split_triples(example: Example) -> list[Triple]:
    """Split a ``head|relation|tail`` label (several joined by newlines) into triples, as written."""
    triples = []
    for line in example.label.split("\n"):
        parts = line.split(TRIPLE_SEPARATOR)
        if len(parts) != 3:
            raise DataError(
                f"triple label {line!r} of item {example.id} is not 'head|relation|tail'",
                line=example.source_line,
                field="label",
            )
        triples.append((parts[0], parts[1], parts[2]))
    return triples


def _triples(label: str | None) -> frozenset[Triple]:
    return parse_triples(label or "")


def _new_relation(triple: Triple, gold: set[Triple], space: LabelSpace, rng: random.Random) -> Triple | None:
    head, _, tail = triple
    h, t = normalize_element(head), normalize_element(tail)  # once, not per relation: a plan builds all
    options = [r for r, n in _normalized(space.relations) if (h, n, t) not in gold]
    return (head, rng.choice(options), tail) if options else None


def _new_tail(triple: Triple, gold: set[Triple], space: LabelSpace, rng: random.Random) -> Triple | None:
    head, relation, _ = triple
    h, r = normalize_element(head), normalize_element(relation)
    # Rejection sampling keeps the draw O(1) on the ~5k-tail pools; the scan is the rare fallback.
    for _ in range(64):
        candidate = rng.choice(space.tails) if space.tails else None
        if candidate is not None and (h, r, normalize_element(candidate)) not in gold:
            return head, relation, candidate
    options = [t for t in space.tails if (h, r, normalize_element(t)) not in gold]
    return (head, relation, rng.choice(options)) if options else None


def _norm(triple: Triple) -> Triple:
    """The triple as the scorer compares it (lowercased, stripped, inner runs of spaces collapsed)."""
    return normalize_element(triple[0]), normalize_element(triple[1]), normalize_element(triple[2])


@functools.lru_cache(maxsize=64)
def _normalized(parts: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(relation, normalized relation) of a dataset's relation set, normalized once per process."""
    return tuple((part, normalize_element(part)) for part in parts)
