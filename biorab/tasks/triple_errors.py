"""The BioRAB paper's error types (§2.8, Table 7) for triple extraction, counted per instance.

Both answers are compared as sets of normalized triples (`biorab.metrics.triples.parse_triples`, the
scoring rule: elements lower-cased, stripped, whitespace runs collapsed; a repeated triple counts once).

The pairing, step by step:

1. A predicted triple equal to a gold triple is correct; these pairs are set aside, and neither side takes
   part in what follows (a second, wrong triple next to a found one is an extra triple, not a wrong slot).
2. Each remaining predicted triple *p* is compared with each remaining gold triple *g*. The pair is
   - ``over_long_span`` when the relations are equal and each entity of *p* equals *g*'s entity in that
     slot or strictly contains it as a substring (at least one does: the paper's "redundant information",
     ``hypoxemia and hypotension induced by nimodipine`` for ``hypotension``);
   - else ``wrong_head``, ``wrong_relation`` or ``wrong_tail`` when *p* and *g* agree in exactly the two
     other slots;
   - else no pair.
3. *p* takes one type: the first of ``over_long_span``, ``wrong_relation``, ``wrong_head``, ``wrong_tail``
   among its pairs (several gold triples may pair with it in different ways), or ``extra_triple`` when it
   pairs with none. *p* may share its gold triple with other predicted triples (many-to-many).
4. A remaining gold triple that pairs with no predicted triple is a ``missing_triple``.

So every predicted triple is correct or has exactly one type: correct + wrong_* + over_long_span +
extra_triple = the number of predicted triples, and correct + (gold triples paired in step 2) +
missing_triple = the number of gold triples. A parse failure predicts no triple (every gold triple is
missing), as in the metrics.
"""

from __future__ import annotations

from biorab.metrics.triples import Triple

#: The error types, in the order a predicted triple takes the first that applies (then the gold-side one).
TRIPLE_ERROR_TYPES: tuple[str, ...] = (
    "over_long_span", "wrong_relation", "wrong_head", "wrong_tail", "extra_triple", "missing_triple",
)  # fmt: skip
_WRONG_SLOT = ("wrong_head", "wrong_relation", "wrong_tail")


def pair_type(predicted: Triple, gold: Triple) -> str | None:
    """How a predicted triple pairs with a (different) gold triple, or ``None`` (step 2 above).

    >>> pair_type(("nimodipine", "effect", "hypoxemia and hypotension"),
    ...           ("nimodipine", "effect", "hypotension"))
    'over_long_span'
    >>> pair_type(("tamoxifen", "effect", "high-dose"), ("tamoxifen", "dosage", "high-dose"))
    'wrong_relation'
    >>> pair_type(("a", "effect", "b"), ("c", "dosage", "b")) is None
    True
    """
    if predicted[1] == gold[1] and all(
        _equal_or_contains(p, g) for p, g in ((predicted[0], gold[0]), (predicted[2], gold[2]))
    ):
        return "over_long_span" if predicted != gold else None
    differing = [slot for slot in range(3) if predicted[slot] != gold[slot]]
    return _WRONG_SLOT[differing[0]] if len(differing) == 1 else None


def triple_error_types(predicted: frozenset[Triple], gold: frozenset[Triple]) -> dict[str, int]:
    """The count of each of `TRIPLE_ERROR_TYPES` for one instance (every type present, zeros included).

    >>> counts = triple_error_types(frozenset({("a", "r", "b"), ("x", "r", "y")}),
    ...                             frozenset({("a", "r", "c")}))
    >>> {name: n for name, n in counts.items() if n}
    {'wrong_tail': 1, 'extra_triple': 1}
    """
    counts = dict.fromkeys(TRIPLE_ERROR_TYPES, 0)
    rest_gold = sorted(gold - predicted)
    paired: set[Triple] = set()
    for triple in sorted(predicted - gold):
        types = {g: t for g in rest_gold if (t := pair_type(triple, g)) is not None}
        paired.update(types)
        found = set(types.values())
        counts[next((t for t in TRIPLE_ERROR_TYPES if t in found), "extra_triple")] += 1
    counts["missing_triple"] = sum(g not in paired for g in rest_gold)
    return counts


def _equal_or_contains(predicted: str, gold: str) -> bool:
    return predicted == gold or (bool(gold) and gold in predicted)
