"""Relevance from the original BioRAB prompt files: the training example the authors' retriever put into
each staged test prompt is the "relevant" item, so recall@k / MRR measure agreement with the original.

Staged files (see the data README): Hetionet test prompts of the authors' ``bm25``, ``contriever``,
``instructor`` and ``random`` runs (``Example(s): Context: <key> Response: <label>``), and the ADE and GIT
test containers (``Excample: context: <key>response: <h|r|t>``; their retriever is not named). The original
BM25 queries contained the gold triple, so agreement with them is not expected to be perfect.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from biorab.common.errors import DataError, RetrievalError
from biorab.common.paths import biorab_data_dir
from biorab.common.records import CorpusItem, Example
from biorab.corpora.store import read_json_lines
from biorab.retrieval.quality import Judgements, canonical_ids

ORIGINAL_FILES: dict[tuple[str, str], str] = {
    **{
        ("hetionet", run): f"hetionet/prompts/hetionet5k_lp_test_instruction_{run}.json"
        for run in ("bm25", "contriever", "instructor", "random")
    },
    ("ade", "container"): "ade/test_instruction_container.json",
    ("git", "container"): "git/test_instruction_container.json",
}
_HETIONET = re.compile(r"Examples?: Context: (.*) Response: (\S+)\s*$", re.S)
_CONTAINER = "Excample: context: "


def original_sources(dataset: str) -> list[str]:
    """The original runs staged for `dataset` (empty when none is)."""
    return sorted(run for name, run in ORIGINAL_FILES if name == dataset)


def original_judgements(
    dataset: str,
    run: str,
    tests: Sequence[Example],
    items: Sequence[CorpusItem],
    *,
    data_dir: str | Path | None = None,
) -> Judgements:
    """Queries (the test inputs) and, per test id, the corpus items equal to the retrieved example of the
    original prompt (same key, and the same value when one matches).

    Raises:
        RetrievalError: no staged prompt file for (`dataset`, `run`), or no prompt matches the corpus.
    """
    if (dataset, run) not in ORIGINAL_FILES:
        known = ", ".join(f"{d}:{r}" for d, r in sorted(ORIGINAL_FILES))
        raise RetrievalError(f"no original prompt file for {dataset}:{run}; staged: {known}")
    path = biorab_data_dir(data_dir) / ORIGINAL_FILES[(dataset, run)]
    by_text = {_norm(e.text): e for e in reversed(tests)}  # first test example wins on duplicates
    index = _key_index(items)
    queries: dict[str, str] = {}
    relevant: dict[str, set[str]] = {}
    for context, key, value in _prompts(path, dataset):
        example = by_text.get(_norm(context))
        matches = index.get(_norm(key), {})
        ids = matches.get(value) or {i for group in matches.values() for i in group}
        if example is None or not ids or example.id in queries:
            continue
        queries[example.id] = example.text
        relevant[example.id] = ids
    if not queries:
        raise RetrievalError(f"{path}: no prompt's retrieved example matches an item of this corpus")
    return Judgements(queries=queries, relevant=relevant)


def _prompts(path: Path, dataset: str) -> list[tuple[str, str, str]]:
    """(test context, retrieved key, retrieved value) for every prompt of the file."""
    out = []
    for line, row in enumerate(read_json_lines(path, what="original prompt file"), start=1):
        pair = _retrieved(str(row.get("instruction", "")), dataset)
        if pair is None:
            raise DataError(
                "no retrieved example in the instruction", path=path, line=line, field="instruction"
            )
        out.append((str(row.get("context", "")), *pair))
    return out


def _retrieved(instruction: str, dataset: str) -> tuple[str, str] | None:
    if dataset == "hetionet":
        found = _HETIONET.search(instruction)
        return (found.group(1), found.group(2)) if found else None
    if _CONTAINER not in instruction:
        return None
    example = instruction.split(_CONTAINER, 1)[1]
    key, sep, value = example.rpartition("response: ")
    return (key, value.strip()) if sep else None


def _key_index(items: Sequence[CorpusItem]) -> dict[str, dict[str | None, set[str]]]:
    canonical = canonical_ids(items)
    index: dict[str, dict[str | None, set[str]]] = {}
    for item in items:
        index.setdefault(_norm(item.key), {}).setdefault(item.value, set()).add(canonical[item.id])
    return index


def _norm(text: str) -> str:
    return " ".join(text.split())
