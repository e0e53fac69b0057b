"""Plausible and absurd lies: the wrong label of a counterfactual item chosen *near* its original (the most
confusable one) or *far* from it (the least confusable), for the ``counterfactual_near`` and
``counterfactual_far`` testbeds (docs/retrieval.md § Plausibility of the counterfactual).

ClashEval finds that a plausible perturbation overrides a model's prior far more often than an absurd one.
*Confusability* is defined from the training split alone (no model), per task:

- closed labels (classification, NLI, link prediction): the cosine similarity between the bags of words
  (lower-cased ``\\w+`` tokens, counted) of all training keys carrying the original label and of all
  training keys carrying the candidate label: two labels whose texts look alike are the ones the training
  data confuses. A label no training key carries has an empty bag (similarity 0);
- QA: the cosine similarity between the bag of words of the gold option's text and of the candidate
  option's text (the question's other options);
- triple extraction: the first triple's tail is replaced; the confusability of a candidate tail is the
  number of training triples with the same relation (normalized as the scorer does) and that tail: near is
  a tail the relation takes most often, far one it never takes (count 0). A candidate that recreates a gold
  triple of the item is never chosen.

Near is the candidate of highest confusability, far of lowest; ties are drawn with the corpus's seeded
generator. A binary label set has one candidate, so near and far coincide there (the ledger still records
which was asked). The ledger records the choice (``plausibility``) and the candidate's ``confusability``.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from biorab.common.errors import DataError
from biorab.common.records import Example
from biorab.tasks import get_task, task_names
from biorab.tasks.task_types import LabelSpace

Plausibility = Literal["near", "far"]
_WORD = re.compile(r"\w+")


def bag(text: str) -> Counter[str]:
    """The counted lower-cased word tokens of `text`."""
    return Counter(_WORD.findall(text.lower()))


def cosine(a: Mapping[str, int], b: Mapping[str, int]) -> float:
    """Cosine similarity of two bags (0 when either is empty).

    >>> cosine(bag("a b"), bag("a c"))
    0.5
    """
    dot = sum(n * b.get(word, 0) for word, n in a.items())
    norm = math.sqrt(sum(n * n for n in a.values())) * math.sqrt(sum(n * n for n in b.values()))
    return dot / norm if norm else 0.0


def _norm(text: str) -> str:
    return " ".join(text.lower().split())  # the scorer's element normalization


@dataclass
class Confusability:
    """What confusability is computed from, built once per training split (`of`)."""

    task: str
    label_bags: dict[str, Counter[str]] = field(default_factory=dict)
    tail_counts: dict[str, Counter[str]] = field(default_factory=dict)
    _normed: dict[tuple[str, ...], tuple[str, ...]] = field(default_factory=dict)

    def normed(self, tails: tuple[str, ...]) -> tuple[str, ...]:
        """`tails` normalized, once per label space (a corpus scores every tail for every corrupted item)."""
        if tails not in self._normed:
            self._normed[tails] = tuple(_norm(t) for t in tails)
        return self._normed[tails]

    @classmethod
    def of(cls, examples: Sequence[Example]) -> Confusability:
        task = examples[0].task
        rule = get_task(task).confusability  # the task owns what its lies are confusable by
        if rule is None:
            covered = [t for t in task_names() if get_task(t).confusability is not None]
            raise DataError(f"task {task!r} has no plausibility rule (near/far counterfactuals cover "
                            f"{', '.join(covered)})", field="testbed")
        out = cls(task)
        if rule == "relation_tails":
            from biorab.tasks.triples import split_triples

            for ex in examples:
                for _, relation, tail in split_triples(ex):
                    out.tail_counts.setdefault(_norm(relation), Counter())[_norm(tail)] += 1
        elif rule == "label_texts":
            for ex in examples:
                out.label_bags.setdefault(ex.label, Counter()).update(bag(ex.text))
        return out


def _pick(scored: Sequence[tuple[str, float]], which: Plausibility, rng: random.Random) -> tuple[str, float]:
    """The candidate of highest (near) or lowest (far) score; ties drawn with `rng`."""
    best = max(s for _, s in scored) if which == "near" else min(s for _, s in scored)
    tied = [c for c, s in scored if s == best]
    return (tied[0] if len(tied) == 1 else rng.choice(tied)), best


def plausible_wrong_label(example: Example, space: LabelSpace, conf: Confusability, which: Plausibility,
                          rng: random.Random) -> tuple[str, str, float]:
    """(wrong label, how, its confusability) for `example` (see the module docstring)."""
    kind = get_task(example.task)
    if kind.confusability == "relation_tails":
        return _tail(example, space, conf, which, rng)
    if kind.confusability == "option_texts":
        options = example.fields.get("options")
        gold = example.label.strip("()")
        if not isinstance(options, Mapping) or gold not in options:
            raise DataError(f"item {example.id}: a near/far QA lie needs the option texts "
                            f"(fields.options with the gold {example.label!r})", line=example.source_line,
                            field="options")
        scored = [(f"({k})", cosine(bag(str(options[gold])), bag(str(v)))) for k, v in sorted(options.items())
                  if k != gold]
    else:
        if example.label not in space.labels:
            raise DataError(f"label {example.label!r} of item {example.id} is not in the label set "
                            f"{list(space.labels)}", line=example.source_line, field="label")
        own = conf.label_bags.get(example.label, Counter())
        scored = [(label, cosine(own, conf.label_bags.get(label, Counter()))) for label in space.labels
                  if label != example.label]
    if not scored:
        raise DataError(f"item {example.id}: no wrong label to choose", field="label")
    label, score = _pick(scored, which, rng)
    return label, kind.plausible_how, score


def _tail(example: Example, space: LabelSpace, conf: Confusability, which: Plausibility,
          rng: random.Random) -> tuple[str, str, float]:
    from biorab.tasks.triples import TRIPLE_SEPARATOR, split_triples

    triples = split_triples(example)
    gold = {(_norm(h), _norm(r), _norm(t)) for h, r, t in triples}
    head, relation, _ = triples[0]
    h, r = _norm(head), _norm(relation)
    counts = conf.tail_counts.get(r, Counter())
    scored = [(t, float(counts.get(n, 0))) for t, n in zip(space.tails, conf.normed(space.tails), strict=True)
              if (h, r, n) not in gold]
    if not scored:
        raise DataError(f"item {example.id}: no other tail to swap in", line=example.source_line,
                        field="label")
    tail, score = _pick(scored, which, rng)
    lines = [TRIPLE_SEPARATOR.join((head, relation, tail)), *(TRIPLE_SEPARATOR.join(t) for t in triples[1:])]
    return "\n".join(lines), get_task(example.task).plausible_how, score
