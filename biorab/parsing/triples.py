"""Robust triple parsing: every ``head|relation|tail`` the model really answered, in canonical form.

Accepted: pipe lines with any spacing, markdown bullets, tables and code fences, several triples (one per
line, or ``;``-separated), ``(h, r, t)`` tuples when the relation is in the relation set, and chains such as
``a|effect|b|dosage|c``. Entities keep their casing (metrics lowercase) with whitespace collapsed; the
relation is mapped onto the relation set's spelling when it matches ignoring case, ``_``, ``-`` and spaces.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from biorab.parsing.segments import answer_lines, answer_regions

Triple = tuple[str, str, str]

_HEADER_CELLS = {
    "head", "head entity", "relation", "tail", "tail entity", "relation type", "subject", "object",
}  # fmt: skip
_TUPLE = re.compile(r"[(\[{]([^()\[\]{}]*)[)\]}]")
_WRAPPERS = {"(": ")", "[": "]", "{": "}"}


def relation_key(relation: str) -> str:
    """A spelling-insensitive key: ``"Interacts with"`` and ``"INTERACTS_WITH"`` share one.

    >>> relation_key("Interacts with") == relation_key("INTERACTS_WITH")
    True
    """
    return re.sub(r"[\s_\-]+", "_", relation.strip().lower())


def parse_triples(text: str, relations: Sequence[str] | None = None) -> list[Triple]:
    """All triples of the first answer region that has any, de-duplicated, in order.

    >>> parse_triples(" Levodopa | dopamine | Parkinson disease\\n\\nExample 6: a|b|c")
    [('Levodopa', 'dopamine', 'Parkinson disease')]
    >>> parse_triples("- (tamoxifen, Effect, retinal changes.)", ["effect", "dosage"])
    [('tamoxifen', 'effect', 'retinal changes')]
    """
    canon = {relation_key(r): r for r in relations or ()}
    for region in answer_regions(text):
        found: list[Triple] = []
        for line in answer_lines(region):
            found.extend(_line_triples(line, canon))
        if found:
            return list(dict.fromkeys(found))
    return []


def format_triples(triples: Sequence[Triple]) -> str:
    """The canonical label: one ``h|r|t`` per line."""
    return "\n".join("|".join(triple) for triple in triples)


def _line_triples(line: str, canon: dict[str, str]) -> list[Triple]:
    if "|" in line:
        line = _unwrap(line.strip().rstrip(".;,").strip())
        pieces = [p for p in re.split(r"\s*;\s*", line) if p.count("|") == 2]
        if len(pieces) > 1:
            return [t for piece in pieces for t in _cells_triples(piece.strip().strip("|").split("|"), canon)]
        return _cells_triples(line.strip().strip("|").split("|"), canon)
    if not canon:
        return []
    found = []
    for inner in _TUPLE.findall(line):
        found.extend(_comma_triples(inner.split(","), canon))
    return found


def _unwrap(line: str) -> str:
    """``(a|b|c)`` -> ``a|b|c`` when the first bracket closes only at the end; brackets that belong to an
    entity (``(+/-)pindolol|ANTAGONIST|5-HT(1A)``, ``TK-1)``) are kept."""
    if line[:1] not in _WRAPPERS or not line.endswith(_WRAPPERS[line[0]]):
        return line
    depth = 0
    for position, char in enumerate(line):
        depth += (char == line[0]) - (char == _WRAPPERS[line[0]])
        if depth == 0 and position < len(line) - 1:
            return line
    return line[1:-1]


def _cells_triples(raw_cells: list[str], canon: dict[str, str]) -> list[Triple]:
    cells = [_clean_cell(cell) for cell in raw_cells]
    if len(cells) == 3:
        triple = _make(cells[0], cells[1], cells[2], canon)
        return [triple] if triple else []
    if len(cells) < 3 or not canon:
        return []
    # A chain "a|effect|b|dosage|c": one triple around every relation that has cells on both sides.
    triples = [_make(cells[i - 1], cells[i], cells[i + 1], canon) for i in range(1, len(cells) - 1)
               if relation_key(cells[i]) in canon]
    return [t for t in triples if t]


def _comma_triples(parts: list[str], canon: dict[str, str]) -> list[Triple]:
    # Entities may contain commas, so split around the one part that is a relation.
    hits = [i for i in range(1, len(parts) - 1) if relation_key(parts[i]) in canon]
    if len(hits) != 1:
        return []
    i = hits[0]
    triple = _make(_clean_cell(",".join(parts[:i])), _clean_cell(parts[i]),
                   _clean_cell(",".join(parts[i + 1 :])), canon)
    return [triple] if triple else []


def _make(head: str, relation: str, tail: str, canon: dict[str, str]) -> Triple | None:
    tail = tail.rstrip(".;,").rstrip()
    if not head or not relation or not tail or set(head + relation + tail) <= set("-: "):
        return None
    if {head.lower(), relation.lower(), tail.lower()} <= _HEADER_CELLS:
        return None  # a table header or the instruction's "head entity|relation|tail entity"
    return head, canon.get(relation_key(relation), relation), tail


def _clean_cell(cell: str) -> str:
    """Trim, collapse runs of spaces/tabs, drop markdown marks and quotes that wrap the whole cell
    (quotes inside an entity, as in ``'low' doses``, are part of it)."""
    cell = re.sub(r"[ \t]+", " ", cell).strip().strip("*`_").strip()
    if len(cell) >= 2 and cell[0] == cell[-1] and cell[0] in "\"'" and cell.count(cell[0]) == 2:
        cell = cell[1:-1].strip()
    return cell
