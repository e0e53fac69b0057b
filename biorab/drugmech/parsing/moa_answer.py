"""YES/NO + MoA-graph answers of the factual test and Add-Link positives (spec §9.2).

The answer's first line starting with YES or NO decides; after a YES the remaining lines are read as
``Type: Name | relation | Type: Name`` triples into a graph whose root (drug) and sink (disease) are then
identified. Two modes:

* ``strict_original`` reproduces the original: ``^(YES|NO)`` is a prefix match, so "Note: ..." and
  "Not ..." read as NO, and markdown ``**YES.**`` does not match at all (the original raised; here the
  answer is unparsed). A triple line with exactly one ``Type: Name`` part in position 0 or 1 becomes a
  self-loop, as in the original.
* ``robust`` (default) strips leading markdown (``*#_>`` and list bullets) and needs YES/NO as a whole
  word; the one-node triple is read head = first part, tail = last part instead of a self-loop.

An answer with no YES/NO line is unparsed (``yes_no=None``), which every score counts as wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx

from biorab.drugmech.graph.moa import FORMAL2KG, NODE_NAME, NODE_TYPE, capitalize_words
from biorab.drugmech.parsing.option_answer import PARSER_MODES, ROBUST, STRICT_ORIGINAL

UNKNOWN_TYPE = "UnknownEntityType"
ASSOCIATED_WITH = "associated with"
NEW_DISEASE = "new disease"

_YES_NO_STRICT = re.compile(r"^(YES|NO)", re.IGNORECASE)
_YES_NO_ROBUST = re.compile(r"^(YES|NO)\b", re.IGNORECASE)
_MARKDOWN_LEAD = re.compile(r"^(?:[*#_>`]+|[-+•]\s|\d+[.)]\s)*\s*")
_MARKDOWN_TRAIL = re.compile(r"[*_`]+$")
_SPLIT = re.compile(r"\s+\|\s+")
_NODE = re.compile(r"^([^:]+):\s+(.+)")


@dataclass(frozen=True)
class ParsedMoA:
    """A graph read from an answer. Node ids are ``f"{type}.{k}"``; attributes ``type`` and ``name``;
    edge key = relation. `root` / `sink` are None when they cannot be identified."""

    graph: nx.MultiDiGraph
    root: str | None
    sink: str | None


@dataclass(frozen=True)
class MoaAnswer:
    """A parsed YES/NO answer: `yes_no` is ``"YES"``, ``"NO"`` or None (unparsed); `moa` only after YES."""

    yes_no: str | None
    moa: ParsedMoA | None

    @property
    def parsed(self) -> bool:
        return self.yes_no is not None


def clean_line(line: str, mode: str) -> str:
    """A stripped answer line; the robust mode also removes leading/trailing markdown marks."""
    line = line.strip()
    if mode == ROBUST:
        line = _MARKDOWN_TRAIL.sub("", _MARKDOWN_LEAD.sub("", line)).strip()
    return line


def yes_no_of(line: str, mode: str) -> str | None:
    """``"YES"`` / ``"NO"`` if the (cleaned) line starts with it under the mode's rule, else None."""
    pattern = _YES_NO_ROBUST if mode == ROBUST else _YES_NO_STRICT
    m = pattern.match(clean_line(line, mode))
    return m.group(1).upper() if m else None


class _GraphBuilder:
    def __init__(self) -> None:
        self.graph = nx.MultiDiGraph()
        self.ids: dict[tuple[str, str], str] = {}

    def node(self, text: str) -> str:
        m = _NODE.match(text)
        node_type, name = (FORMAL2KG.get(m.group(1), m.group(1)), m.group(2)) if m else (UNKNOWN_TYPE, text)
        key = (node_type, name)  # exact, case-sensitive, as the original
        if key not in self.ids:
            self.ids[key] = f"{node_type}.{len(self.ids)}"
            self.graph.add_node(self.ids[key], **{NODE_TYPE: node_type, NODE_NAME: name})
        return self.ids[key]


def _split_triple(parts: list[str], mode: str) -> tuple[str, str, str]:
    node_like = [i for i, p in enumerate(parts) if _NODE.match(p)]
    if len(node_like) >= 2:
        head, tail = parts[node_like[0]], parts[node_like[-1]]
        rel = " + ".join(p for i, p in enumerate(parts) if i not in (node_like[0], node_like[-1]))
        return head, rel, tail
    if len(node_like) == 1:
        i = node_like[0]
        if i in (0, 1) and mode == STRICT_ORIGINAL:
            return parts[i], " + ".join(p for j, p in enumerate(parts) if j != i), parts[i]  # a self-loop
        if i not in (0, 1):
            return parts[0], parts[1], parts[i]
    return parts[0], " + ".join(parts[1:-1]), parts[-1]


def parse_triples(lines: Iterable[str], *, mode: str = ROBUST) -> nx.MultiDiGraph:
    """Read ``head | relation | tail`` lines into a graph (lines with fewer than 3 parts are skipped)."""
    builder = _GraphBuilder()
    for raw in lines:
        line = clean_line(raw, mode)
        if not line:
            continue
        parts = _SPLIT.split(line)
        if len(parts) < 3:
            continue
        head, rel, tail = _split_triple(parts, mode)
        if head == "Disease: new disease":
            head, tail = tail, head
        u, v = builder.node(head), builder.node(tail)
        if not builder.graph.has_edge(u, v, key=rel):
            builder.graph.add_edge(u, v, key=rel)
    return builder.graph


def _find_root(graph: nx.MultiDiGraph, drug_name: str) -> str | None:
    roots = [n for n in graph.nodes if graph.in_degree(n) == 0]
    if len(roots) == 1:
        return str(roots[0])
    if not roots:
        wanted = capitalize_words(drug_name)
        found = [n for n, d in graph.nodes(data=True) if d[NODE_TYPE] == "Drug" and d[NODE_NAME] == wanted]
        return str(found[0]) if found else None
    named = [n for n in roots if graph.nodes[n][NODE_NAME].casefold() == drug_name.casefold()]
    return str(named[0]) if len(named) == 1 else None


def _find_sink(graph: nx.MultiDiGraph, disease_name: str) -> str | None:
    # Sinks are the nodes without out-edges other than the roots (an isolated node is a root).
    sinks = [n for n in graph.nodes if graph.out_degree(n) == 0 and graph.in_degree(n) > 0]
    if len(sinks) <= 1:
        return str(sinks[0]) if sinks else None
    matching = [
        n
        for n in sinks
        if "disease" in graph.nodes[n][NODE_TYPE].casefold()
        and graph.nodes[n][NODE_NAME].casefold() == disease_name.casefold()
    ]
    if len(matching) == 1:
        return str(matching[0])
    existing = [
        n for n, d in graph.nodes(data=True) if d[NODE_TYPE] == "Disease" and d[NODE_NAME] == disease_name
    ]
    sink = str(existing[0]) if existing else f"Disease.{graph.number_of_nodes()}"
    if not existing:
        graph.add_node(sink, **{NODE_TYPE: "Disease", NODE_NAME: disease_name})
    for s in sinks:
        if s != sink and not graph.has_edge(s, sink, key=ASSOCIATED_WITH):
            graph.add_edge(s, sink, key=ASSOCIATED_WITH)
    return sink


def parse_moa_answer(
    text: str, *, drug_name: str, disease_name: str, anonymized: bool = False, mode: str = ROBUST
) -> MoaAnswer:
    """Parse a factual or Add-Link answer into YES/NO and, after YES, its MoA graph.

    Args:
        text: The model's answer.
        drug_name: The drug as named in the prompt (used to pick the root among several).
        disease_name: The disease as named in the prompt (used to pick or create the sink).
        anonymized: The prompt was in Anonymized-Disease mode; the sink is then "new disease".
        mode: ``strict_original`` or ``robust``.

    Never raises on model output.
    """
    if mode not in PARSER_MODES:
        raise ValueError(f"unknown parser mode {mode!r}; allowed: {', '.join(PARSER_MODES)}")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        answer = yes_no_of(line, mode)
        if answer is None:
            continue
        if answer == "NO":
            return MoaAnswer("NO", None)
        graph = parse_triples(lines[i + 1 :], mode=mode)
        root = _find_root(graph, drug_name)
        sink = _find_sink(graph, NEW_DISEASE if anonymized else disease_name)
        return MoaAnswer("YES", ParsedMoA(graph, root, sink))
    return MoaAnswer(None, None)
