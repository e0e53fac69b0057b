"""Accuracy tables from scored rows: per cell (query file × world, or × disease mode for the factual test)
over runs, and per group of cells with the stratified BCa bootstrap (spec §11, §12).

Unparsed and incomplete answers count as wrong in every accuracy here and are reported separately per
cell. ``accuracy_strict_complete_only`` gives the original's denominator (incomplete answers left out)
for comparison with the paper; with ``exclude_incomplete`` (the paper's rule, switched on by the DrugMech
paper's jobs) every accuracy leaves them out.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from biorab.drugmech.queries.query_files import ADD_LINK, CHANGE_LINK, DELETE_LINK, KNOWN_MOA
from biorab.drugmech.scoring.aggregate import DEFAULT_SEED, N_RESAMPLES, run_stats, stratified_bca
from biorab.drugmech.scoring.responses import ScoredRow

CellKey = tuple[str, str | None, str | None]  # (query file, world, factual mode)
_EDIT = (DELETE_LINK, CHANGE_LINK)

# Spec §12.2, in print order: name -> test on (query type, is negative, link, world).
GROUPS: dict[str, Callable[[str, bool, str | None, str | None], bool]] = {
    "All counterfactuals": lambda q, n, lk, w: True,
    "All open world": lambda q, n, lk, w: w == "open",
    "All closed world": lambda q, n, lk, w: w == "closed",
    "All positives": lambda q, n, lk, w: not n,
    "All negatives": lambda q, n, lk, w: n,
    "Positives open": lambda q, n, lk, w: not n and w == "open",
    "Negatives open": lambda q, n, lk, w: n and w == "open",
    "Positives closed": lambda q, n, lk, w: not n and w == "closed",
    "Negatives closed": lambda q, n, lk, w: n and w == "closed",
    "Add-Link positives open": lambda q, n, lk, w: q == ADD_LINK and not n and w == "open",
    "Add-Link negatives open": lambda q, n, lk, w: q == ADD_LINK and n and w == "open",
    "Surface open": lambda q, n, lk, w: lk == "dpi" and w == "open",
    "Deep open": lambda q, n, lk, w: lk == "ppi" and w == "open",
    "Surface closed": lambda q, n, lk, w: lk == "dpi" and w == "closed",
    "Deep closed": lambda q, n, lk, w: lk == "ppi" and w == "closed",
    "Delete+Invert deep open positives": lambda q, n, lk, w: (
        q in _EDIT and lk == "ppi" and w == "open" and not n
    ),
    "Delete+Invert deep open negatives": lambda q, n, lk, w: q in _EDIT and lk == "ppi" and w == "open" and n,
}


def cell_key(row: ScoredRow) -> CellKey:
    """Counterfactual cells are split by world, factual cells by disease mode."""
    if row.query_type == KNOWN_MOA:
        return (row.response.query_file, None, row.response.mode)
    return (row.response.query_file, row.response.world, None)


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _graph_means(rows: Sequence[ScoredRow]) -> dict[str, float | None]:
    """Means over the true positives (answered YES); a None interior score counts as 0, as the original."""
    hits = [r.score for r in rows if r.score.yes_no == "YES" and r.score.reduced_edge_match is not None]
    if not hits:
        return {"interior_node_match": None, "reduced_edge_match": None, "n_true_positives": 0}
    return {
        "interior_node_match": sum(s.interior_node_match or 0.0 for s in hits) / len(hits),
        "reduced_edge_match": sum(s.reduced_edge_match or 0.0 for s in hits) / len(hits),
        "n_true_positives": len(hits),
    }


def _cell(key: CellKey, rows: list[ScoredRow]) -> dict[str, Any]:
    by_run: dict[int, list[ScoredRow]] = defaultdict(list)
    for r in rows:
        by_run[r.response.run].append(r)
    runs = [by_run[k] for k in sorted(by_run)]
    first = rows[0]
    cell: dict[str, Any] = {
        "query_file": key[0],
        "world": key[1],
        "mode": key[2],
        "query_type": first.query_type,
        "is_negative": first.is_negative,
        "runs": len(runs),
        "n": len(rows),
        "n_unparsed": sum(1 for r in rows if not r.score.parsed and not r.score.incomplete),
        "n_incomplete": sum(1 for r in rows if r.score.incomplete),
        "accuracy_strict": run_stats(
            [_share([r.score.correct_strict for r in run]) for run in runs]
        ).to_json(),
        "accuracy_strict_complete_only": run_stats(
            [_share([r.score.correct_strict for r in run if not r.score.incomplete]) for run in runs]
        ).to_json(),
        "accuracy_relaxed": None,
    }
    if first.query_type in _EDIT:
        cell["accuracy_relaxed"] = run_stats(
            [_share([bool(r.score.correct_relaxed) for r in run]) for run in runs]
        ).to_json()
        counts = Counter(str(r.score.option) for r in rows if not r.score.incomplete)
        cell["option_counts"] = dict(sorted(counts.items()))
        complete = sum(counts.values())
        cell["option_shares"] = {k: v / complete for k, v in sorted(counts.items())}
    if not first.is_negative and first.query_type in (ADD_LINK, KNOWN_MOA):
        cell.update(_graph_means(rows))
    return cell


def _groups(cells: dict[CellKey, list[ScoredRow]], *, n_resamples: int, seed: int) -> list[dict[str, Any]]:
    out = []
    counterfactual = {k: v for k, v in cells.items() if v[0].query_type != KNOWN_MOA}
    for name, member in GROUPS.items():
        chosen = {
            k: v
            for k, v in counterfactual.items()
            if member(v[0].query_type, v[0].is_negative, v[0].link, k[1])
        }
        if not chosen:
            continue
        types = {v[0].query_type for v in chosen.values()}
        upsample = len(types) > 1 and ADD_LINK in types  # weight 250-sample files like the 1,000-sample ones
        strata = []
        for rows in chosen.values():
            first_run = min(r.response.run for r in rows)
            x = [float(r.score.correct_strict) for r in rows if r.response.run == first_run]
            strata.append(x * 4 if upsample and rows[0].query_type in _EDIT else x)
        ci = stratified_bca(strata, n_resamples=n_resamples, seed=seed)
        out.append({"group": name, "files": len(chosen), **ci.to_json()})
    return out


def _pairs(cells: dict[CellKey, list[ScoredRow]]) -> list[dict[str, Any]]:
    """Precision, recall and F1 where a positive and a negative cell of the same kind are both present.

    "Positive" means the model asserts an effect: a correct positive is a true positive, a wrong negative a
    false positive (strict correctness, all runs pooled; unparsed answers count as wrong).
    """
    kinds: dict[tuple[str, str | None, str | None, str | None], dict[bool, list[ScoredRow]]] = defaultdict(
        dict
    )
    for (_file, world, mode), rows in cells.items():
        kinds[(rows[0].query_type, rows[0].link, world, mode)][rows[0].is_negative] = rows
    out = []
    for (query_type, link, world, mode), sides in kinds.items():
        if len(sides) < 2:
            continue
        tp = sum(r.score.correct_strict for r in sides[False])
        fn = len(sides[False]) - tp
        fp = sum(not r.score.correct_strict for r in sides[True])
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        out.append(
            {
                "query_type": query_type,
                "link": link,
                "world": world,
                "mode": mode,
                "tp": tp,
                "fp": fp,
                "fn": fn,
                "tn": len(sides[True]) - fp,
                "precision": precision,
                "recall": recall,
                "f1": f1,
            }
        )
    return out


def accuracy_report(
    rows: Sequence[ScoredRow], *, n_resamples: int = N_RESAMPLES, seed: int = DEFAULT_SEED,
    exclude_incomplete: bool = False,
) -> dict[str, Any]:
    """The ``accuracy`` object of ``biorab drugmech score --json``: totals, cells, groups and pairs.

    `exclude_incomplete` (the DrugMech paper's rule, spec §9.1): an incomplete answer (finish reason not
    ``stop``, or a failed generation) is left out of every accuracy, numerator and denominator; each cell
    still counts them (``n_incomplete``), and its ``n`` is the answers counted."""
    cells: dict[CellKey, list[ScoredRow]] = defaultdict(list)
    incomplete: Counter[CellKey] = Counter()
    for r in rows:
        if exclude_incomplete and r.score.incomplete:
            incomplete[cell_key(r)] += 1
        else:
            cells[cell_key(r)].append(r)
    table = [_cell(k, v) for k, v in cells.items()]
    for cell, key in zip(table, cells, strict=True):
        cell["n_incomplete"] += incomplete[key]
    return {
        "n": sum(len(v) for v in cells.values()),
        "n_unparsed": sum(1 for r in rows if not r.score.parsed and not r.score.incomplete),
        "n_incomplete": sum(1 for r in rows if r.score.incomplete),
        "exclude_incomplete": exclude_incomplete,
        "cells": table,
        "cells_all_incomplete": [list(k) for k in incomplete if k not in cells],
        "groups": _groups(cells, n_resamples=n_resamples, seed=seed),
        "pairs": _pairs(cells),
    }
