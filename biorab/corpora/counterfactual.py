"""Wrong labels for the counterfactual testbeds (the paper's "mislabeled annotations").

Each wrong label comes from the task's label space and differs from the gold one:
- triple extraction: the first triple gets a wrong relation (from the dataset's relation set) or a wrong
  tail (taken from another training item), chosen with equal odds; when one kind is impossible the other
  is used. A replacement that recreates a gold triple of the same item is never chosen, and tails are
  compared case-insensitively (the scorer lowercases), so a corrupted triple is always scored wrong;
- link prediction: another relation label of the dataset;
- classification and NLI: another class (the other class for binary label sets);
- QA: another option of the same question.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass

from biorab.errors import DataError
from biorab.labels import LABELS, RELATIONS
from biorab.records import Example

TRIPLE_SEPARATOR = "|"


@dataclass(frozen=True)
class LabelSpace:
    """What wrong labels of one training set may be drawn from.

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


def parse_triples(example: Example) -> list[tuple[str, str, str]]:
    """Split a ``head|relation|tail`` label (several joined by newlines) into triples."""
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


def label_space(dataset: str, examples: Sequence[Example]) -> LabelSpace:
    """The label space of `dataset`: `biorab.labels` when it knows the dataset, else the labels seen in
    `examples` (bring-your-own datasets), sorted."""
    if not examples:
        raise DataError(f"dataset {dataset!r} has no training items to build a corpus from")
    task = examples[0].task
    if task == "triple_extraction":
        triples = [t for example in examples for t in parse_triples(example)]
        relations = RELATIONS.get(dataset) or tuple(sorted({r for _, r, _ in triples}))
        return LabelSpace(task=task, relations=relations, tails=tuple(sorted({t for _, _, t in triples})))
    labels = LABELS.get(dataset) or tuple(sorted({example.label for example in examples}))
    return LabelSpace(task=task, labels=labels)


def wrong_label(example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
    """A wrong label for `example` and how it was made (``relation``, ``tail``, ``label``,
    ``other_class`` or ``option``)."""
    if example.task == "triple_extraction":
        return _wrong_triple(example, space, rng)
    if example.task == "qa":
        return _pick_other(example, _qa_options(example, space), rng), "option"
    how = "label" if example.task == "link_prediction" else "other_class"
    return _pick_other(example, space.labels, rng), how


def _pick_other(example: Example, labels: Sequence[str], rng: random.Random) -> str:
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


def _qa_options(example: Example, space: LabelSpace) -> tuple[str, ...]:
    options = example.fields.get("options")
    if isinstance(options, dict) and options:
        return tuple(f"({letter})" for letter in sorted(options))
    return space.labels


def _wrong_triple(example: Example, space: LabelSpace, rng: random.Random) -> tuple[str, str]:
    triples = parse_triples(example)
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


def _new_relation(
    triple: tuple[str, str, str], gold: set[tuple[str, str, str]], space: LabelSpace, rng: random.Random
) -> tuple[str, str, str] | None:
    head, _, tail = triple
    h, t = _norm_part(head), _norm_part(tail)  # once, not per relation: a plan builds every testbed
    options = [r for r, n in _norm_parts(space.relations) if (h, n, t) not in gold]
    return (head, rng.choice(options), tail) if options else None


def _new_tail(
    triple: tuple[str, str, str], gold: set[tuple[str, str, str]], space: LabelSpace, rng: random.Random
) -> tuple[str, str, str] | None:
    head, relation, _ = triple
    h, r = _norm_part(head), _norm_part(relation)
    # Rejection sampling keeps the draw O(1) on the ~5k-tail pools; the scan is the rare fallback.
    for _ in range(64):
        candidate = rng.choice(space.tails) if space.tails else None
        if candidate is not None and (h, r, _norm_part(candidate)) not in gold:
            return head, relation, candidate
    options = [t for t in space.tails if (h, r, _norm_part(t)) not in gold]
    return (head, relation, rng.choice(options)) if options else None


def _norm(triple: tuple[str, str, str]) -> tuple[str, str, str]:
    """The triple as the scorer compares it (lowercased, stripped, inner runs of spaces collapsed)."""
    return _norm_part(triple[0]), _norm_part(triple[1]), _norm_part(triple[2])


def _norm_part(part: str) -> str:
    return " ".join(part.lower().split())


@functools.lru_cache(maxsize=64)
def _norm_parts(parts: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(relation, normalised relation) of a dataset's relation set, normalised once per process."""
    return tuple((part, _norm_part(part)) for part in parts)
