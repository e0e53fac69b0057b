"""The BioRAB paper's error types (§2.8, Table 7) for triple extraction, counted per instance.

The paper names two error classes by example (Table 7): "redundant information" (an entity written with
more of the sentence than the gold one, or an answer that repeats the prompt's scaffold or a retrieved
sentence) and "error generation" (a triple about the right entities with the wrong relation or the wrong
other entity). No definition or script is published; the rule below is ours, and every Table 7 / §2.8
example is pinned verbatim, with the type it must get, in ``tests/unit/tasks/test_tasks_error_types.py``.

Both answers are compared as sets of normalized triples (`biorab.metrics.triples.parse_triples`, the
scoring rule: elements lower-cased, stripped, whitespace runs collapsed; a repeated triple counts once).

The pairing, step by step:

1. A predicted triple equal to a gold triple is correct; these pairs are set aside, and neither side takes
   part in what follows (a second, wrong triple next to a found one is an extra triple, not a wrong slot).
2. Each remaining predicted triple *p* is compared with each remaining gold triple *g*. The pair is
   - ``redundant_span`` when the relations are equal and each entity of *p* equals *g*'s entity in that
     slot or is *redundant* over it (at least one is): it strictly contains *g*'s entity (§2.8.3,
     ``hypoxemia and hypotension induced by nimodipine.`` for ``hypotension``), or it ends, after more
     text, with a cut-off start of *g*'s entity at least half its length (Table 7's ADE case, an answer
     cut at its token budget: ``rls symptoms that were initially caused by a 20-mg dail`` for
     ``20-mg daily``);
   - else ``wrong_head``, ``wrong_relation`` or ``wrong_tail`` when *p* and *g* agree in exactly the two
     other slots;
   - else ``error_generation`` when *p* names one of *g*'s entities, in either slot (Table 7's ADE case
     ``(tamoxifen, effect, retinal changes.)`` for ``(tamoxifen, dosage, high-dose)`` and its GIT case,
     head and tail swapped with another relation);
   - else no pair.
3. *p* takes one type: ``echoed_scaffold`` when one of its elements repeats a scaffold label of any
   template (`biorab.tasks.template_catalog.scaffold_markers`: ``retrieved sentence:``, ``context:``,
   ``### response:``...) or a whole retrieved sentence (`echoes`; Table 7's GIT case
   ``adenosylcobalamin.. retrieved sentence: glycerol dehydratase``); else the first of ``redundant_span``,
   ``wrong_relation``, ``wrong_head``, ``wrong_tail``, ``error_generation`` among its pairs (several gold
   triples may pair with it in different ways), or ``extra_triple`` when it pairs with none. *p* may
   share its gold triple with other predicted triples (many-to-many).
4. A remaining gold triple that pairs with no predicted triple (any pair type) is a ``missing_triple``.

So every predicted triple is correct or has exactly one type: correct + the predicted-side types = the
number of predicted triples, and correct + (gold triples paired in step 2) + missing_triple = the number
of gold triples. A parse failure predicts no triple (every gold triple is missing), as in the metrics.

Origins (`ERROR_TYPE_ORIGIN`): ``echoed_scaffold``, ``redundant_span`` and ``error_generation`` are the
paper's; ``wrong_head``, ``wrong_relation`` and ``wrong_tail`` are ours (a finer split of the paper's
"error generation": one slot wrong), and so are ``extra_triple`` and ``missing_triple`` (outside both of
the paper's classes). `PAPER_CLASS` maps each type to the Table 7 class it counts under.
"""

from __future__ import annotations

from collections.abc import Collection

from biorab.metrics.triples import Triple

#: The error types, in the order a predicted triple takes the first that applies (then the gold-side one).
TRIPLE_ERROR_TYPES: tuple[str, ...] = (
    "echoed_scaffold", "redundant_span", "wrong_relation", "wrong_head", "wrong_tail", "error_generation",
    "extra_triple", "missing_triple",
)  # fmt: skip
#: ``paper``: a type Table 7 / §2.8 names; ``ours``: the project's own.
ERROR_TYPE_ORIGIN: dict[str, str] = {
    "echoed_scaffold": "paper", "redundant_span": "paper", "error_generation": "paper",
    "wrong_relation": "ours", "wrong_head": "ours", "wrong_tail": "ours",
    "extra_triple": "ours", "missing_triple": "ours",
}  # fmt: skip
#: The Table 7 class each type counts under (``None``: neither of the paper's two).
PAPER_CLASS: dict[str, str | None] = {
    "echoed_scaffold": "redundant information", "redundant_span": "redundant information",
    "wrong_relation": "error generation", "wrong_head": "error generation", "wrong_tail": "error generation",
    "error_generation": "error generation", "extra_triple": None, "missing_triple": None,
}  # fmt: skip
_WRONG_SLOT = ("wrong_head", "wrong_relation", "wrong_tail")
_PAIR_ORDER = ("redundant_span", "wrong_relation", "wrong_head", "wrong_tail", "error_generation")


def pair_type(predicted: Triple, gold: Triple) -> str | None:
    """How a predicted triple pairs with a (different) gold triple, or ``None`` (step 2 above).

    >>> pair_type(("nimodipine", "effect", "hypoxemia and hypotension"),
    ...           ("nimodipine", "effect", "hypotension"))
    'redundant_span'
    >>> pair_type(("tamoxifen", "effect", "high-dose"), ("tamoxifen", "dosage", "high-dose"))
    'wrong_relation'
    >>> pair_type(("tamoxifen", "effect", "retinal changes"), ("tamoxifen", "dosage", "high-dose"))
    'error_generation'
    >>> pair_type(("a", "effect", "b"), ("c", "dosage", "d")) is None
    True
    """
    if predicted[1] == gold[1] and all(
        p == g or redundant(p, g) for p, g in ((predicted[0], gold[0]), (predicted[2], gold[2]))
    ):
        return "redundant_span" if predicted != gold else None
    differing = [slot for slot in range(3) if predicted[slot] != gold[slot]]
    if len(differing) == 1:
        return _WRONG_SLOT[differing[0]]
    return "error_generation" if {predicted[0], predicted[2]} & {gold[0], gold[2]} else None


def redundant(predicted: str, gold: str) -> bool:
    """The predicted entity is longer than the gold one and holds it: whole, or cut off at the end after at
    least half of it (an answer stopped by its token budget), starting at a word boundary.

    >>> redundant("rls symptoms that were initially caused by a 20-mg dail", "20-mg daily")
    True
    >>> redundant("20-mg dail", "20-mg daily"), redundant("a 20", "20-mg daily")
    (False, False)
    """
    if not gold or len(predicted) <= len(gold):
        return False
    if gold in predicted:
        return True
    for k in range(len(gold) - 1, (len(gold) + 1) // 2 - 1, -1):  # the longest cut-off start first
        start = len(predicted) - k
        if predicted.endswith(gold[:k]) and not predicted[start - 1].isalnum():
            return True
    return False


def echoed(predicted: Triple, echoes: Collection[str]) -> bool:
    """Some element of the predicted triple repeats a scaffold label of the prompt or one of `echoes`
    (normalized retrieved sentences, as `biorab.metrics.triples.normalize_element` writes them).

    >>> echoed(("x", "r", "adenosylcobalamin.. retrieved sentence: glycerol dehydratase"), ())
    True
    """
    from biorab.tasks.scaffold import echoes_prompt
    from biorab.tasks.template_catalog import scaffold_markers

    markers = scaffold_markers()
    return any(echoes_prompt(element, markers, echoes) for element in predicted)


def triple_error_types(predicted: frozenset[Triple], gold: frozenset[Triple],
                       echoes: Collection[str] = ()) -> dict[str, int]:
    """The count of each of `TRIPLE_ERROR_TYPES` for one instance (every type present, zeros included);
    `echoes`: the normalized retrieved sentences of the instance's prompt (step 3 above).

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
        kind = "echoed_scaffold" if echoed(triple, echoes) else next(
            (t for t in _PAIR_ORDER if t in found), "extra_triple")
        counts[kind] += 1
    counts["missing_triple"] = sum(g not in paired for g in rest_gold)
    return counts
