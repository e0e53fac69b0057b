"""Attribution at scoring time: ``<cell dir>/attribution.parquet`` for every dataset-slice cell of a run, and
the attribution rates (with CIs) added to each cell's `CellResult`.

Runs after every cell's rows are scored (the flip needs the twin's rows), from the consolidated predictions
on disk, the testbed's ledger and the test split: no model call, so a resumed, cached or re-tracked run
writes the same file.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from biorab.attribution.answers import answer_flags, error_types_json
from biorab.attribution.evidence import cell_evidence
from biorab.attribution.rates import rates
from biorab.attribution.reasoning_quotes import quotes_corruption
from biorab.attribution.twin import (
    CORRECTNESS_BINS,
    HELPED,
    HURT,
    PRIOR_BINS,
    first_covering,
    flip,
    label_margin,
    prior_bin,
)
from biorab.common.registry import TASKS
from biorab.diagnostics.cell_claims import add_claim_diagnostics
from biorab.ral.specs.cell_records import CellPlan, CellResult

ATTRIBUTION_FILE = "attribution.parquet"

ATTRIBUTION_SCHEMA = pa.schema([
    ("id", pa.string()), ("correct", pa.bool_()), ("parse_failed", pa.bool_()),
    ("has_corrupted", pa.bool_()), ("misleading_evidence", pa.bool_()), ("first_misleading_rank", pa.int64()),
    ("followed_corruption", pa.bool_()), ("copied_evidence", pa.bool_()), ("copied_corrupted", pa.bool_()),
    ("leaked_evidence", pa.bool_()), ("flip", pa.string()), ("twin_cell_id", pa.string()),
    ("twin_followed_corruption", pa.bool_()), ("twin_copied_evidence", pa.bool_()),
    ("twin_copied_corrupted", pa.bool_()), ("switched_to_evidence", pa.bool_()),
    ("switched_to_corruption", pa.bool_()), ("twin_margin", pa.float64()), ("prior_bin", pa.string()),
    ("error_types", pa.string()), ("hit_tags", pa.string()),
    ("reasoning_quotes_corruption", pa.bool_()), ("named_lie_followed", pa.bool_()),
])  # fmt: skip

#: The rates of a retrieving cell (docs/metrics.md), in report order; then those against its no-retrieval
#: twin (absent without one: the report says "no baseline"), the flip rates, and the McNemar p-value of the
#: flips (a p-value in the metric shape: no interval).
EVIDENCE_RATES: tuple[str, ...] = ("misled_rate", "resisted_rate", "copy_rate_clean", "copy_rate_corrupted")
#: Instances whose corrupted evidence all agrees with the gold (out of those with corrupted evidence), and
#: the unconditional misled share (misled / every instance: the dose-response plot's honest axis).
AGREES, MISLED_SHARE = "corruption_agrees_with_gold", "misled_share"
TWIN_RATES: tuple[str, ...] = ("misled_rate_twin", "misled_excess", "switched_to_evidence",
                               "switched_to_corruption", "copy_rate_clean_twin", "copy_rate_clean_excess",
                               "copy_rate_corrupted_twin", "copy_rate_corrupted_excess")
FLIP_RATES: tuple[str, ...] = ("helped_rate", "hurt_rate")
MCNEMAR_P = "flip_mcnemar_p"
#: A thinking model's reasoning against misleading evidence (`biorab.attribution.reasoning_quotes`), over the
#: instances with a misleading hit and reasoning text: it quotes the corruption; it quotes it and the
#: answer follows it ("named the lie and still followed it"). Only cells with reasoning text have them.
REASONING_RATES: tuple[str, ...] = ("quoted_corruption_rate", "named_lie_followed_rate")
ATTRIBUTION_METRICS: tuple[str, ...] = (*EVIDENCE_RATES, AGREES, MISLED_SHARE, *TWIN_RATES, *FLIP_RATES,
                                        MCNEMAR_P, *REASONING_RATES)
#: Prefix of the §2.8 error-type rates (``error_rate/wrong_head``...): MLflow groups them under it.
ERROR_RATE = "error_rate/"
#: The misled rate by the position of the first misleading hit (``misled_by_rank/1``, ``/2``,
#: ``/3_or_more``) and by the twin's prior (``misled_by_prior/<bin>``, `biorab.attribution.twin.PRIOR_BINS`).
BY_RANK, BY_PRIOR = "misled_by_rank/", "misled_by_prior/"
RANKS: tuple[str, ...] = ("1", "2", "3_or_more")
NO_BASELINE = "no baseline"


def is_attribution_metric(name: str) -> bool:
    return name in ATTRIBUTION_METRICS or name.startswith((ERROR_RATE, BY_RANK, BY_PRIOR))


def attributable(plan: CellPlan) -> bool:
    """A dataset slice of a registered task whose rows the parse stage filled."""
    return plan.dataset is not None and plan.retrieval is not None and plan.parses and plan.task in TASKS


def attribute_cells(results: Sequence[CellResult], cells_dir: Path, *, n_boot: int, seed: int) -> None:
    """Write every attributable cell's ``attribution.parquet`` under ``cells_dir/<cell_id>/`` and add its
    rates to its result (`CellResult.metrics`) and its counts to ``extra["attribution"]``."""
    cells = [r for r in results if attributable(r.plan)]
    rows = AttributionRows()
    for result in cells:
        twin = twin_of(result, cells, rows) if result.plan.retrieves else None
        attribute_cell(result, twin, cells_dir, rows, n_boot=n_boot, seed=seed)


def twin_of(result: CellResult, pool: Sequence[CellResult], rows: AttributionRows) -> CellResult | None:
    """`result`'s twin among `pool`: the first `twin_candidates` entry whose rows hold every instance id
    of `result` (`biorab.attribution.twin.first_covering`)."""
    own = {r["id"] for r in rows.of(result)}
    return first_covering(result.plan, own, pool, lambda c: c.plan, lambda c: set(rows.twin(c)))


class AttributionRows:
    """The rows attribution reads, keyed by predictions file (cells of several runs can share a cell id):
    the full attribution rows of one cell at a time (the one being attributed; reading another frees them),
    and, kept for the later cells they can pair with, the few fields a twin gives (`TWIN_FIELDS` by
    instance id). The ledgers and test splits rows are tagged from are read once too.

    Only one cell's rows are held, so the driver's memory is set by the largest cell, not by the run's or
    the sweep's rows (issue 45: peak RSS flat in rows)."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._current: tuple[str, list[dict[str, Any]]] | None = None
        self._twins: dict[str, dict[str, dict[str, Any]]] = {}

    def of(self, result: CellResult) -> list[dict[str, Any]]:
        """The cell's attribution rows (`_cell_rows`), in slice order."""
        key = str(result.predictions_path)
        if self._current is None or self._current[0] != key:
            self._current = None  # the previous cell's rows go before the next are read
            self._current = (key, _cell_rows(result, self._memo))
        return self._current[1]

    def twin(self, result: CellResult) -> dict[str, dict[str, Any]]:
        """The cell's rows as a twin gives them: instance id → `TWIN_FIELDS`, kept for later cells."""
        key = str(result.predictions_path)
        if key not in self._twins:
            full = self._current[1] if self._current is not None and self._current[0] == key \
                else _cell_rows(result, self._memo)
            self._twins[key] = {r["id"]: {f: r[f] for f in TWIN_FIELDS} for r in full}
        return self._twins[key]


#: What `_pair` and `_add_rates` read of a twin's row.
TWIN_FIELDS: tuple[str, ...] = ("id", "_pred", "_right")


def attribute_cell(result: CellResult, twin: CellResult | None, cells_dir: Path, rows: AttributionRows, *,
                   n_boot: int, seed: int) -> None:
    """Write ``cells_dir/<cell_id>/attribution.parquet`` of `result` with each instance's flags against
    `twin` (paired by instance id; ``None``: no twin) and set its rates on `result` (replacing earlier
    ones)."""
    twin_rows = rows.twin(twin) if twin is not None else {}
    own = rows.of(result)
    twin_id = twin.plan.cell_id if twin is not None else None
    for row in own:
        _pair(result.plan.task, row, twin_rows.get(row["id"]), twin_id)
    if any(row["_paired"] for row in own):  # one kind of prior for the whole cell: margins where all have one
        margins = all(row["twin_margin"] is not None for row in own if row["_paired"])
        for row in own:
            if row["_paired"]:
                row["prior_bin"] = prior_bin(row["twin_margin"] if margins else None, row["_twin_right"])
    _write(cells_dir / result.plan.cell_id / ATTRIBUTION_FILE, own)
    _add_rates(result, own, twin_rows, n_boot=n_boot, seed=seed)
    add_claim_diagnostics(result, twin, n_boot=n_boot, seed=seed)


def _pair(task: str, row: dict[str, Any], other: dict[str, Any] | None, twin_id: str | None) -> None:
    """Set `row`'s twin columns from the twin's row `other` (``None``: unpaired, every twin column null):
    the twin's answer flagged against this cell's hits, the switches and the twin's prior margin."""
    row.update(twin_cell_id=twin_id, flip=None, twin_followed_corruption=None, twin_copied_evidence=None,
               twin_copied_corrupted=None, switched_to_evidence=None, switched_to_corruption=None,
               twin_margin=None, prior_bin=None, _paired=other is not None, _twin_right=False)
    if other is None:
        return
    twin = answer_flags(task, row["_gold"], other["_pred"], row["_hits"], row["_tag_list"])
    # The cell's answer equals a hit's label that the twin did not answer: the evidence switched it.
    switched = twin.items != row["_items"]
    row.update(flip=flip(other["_right"], row["_right"]), twin_followed_corruption=twin.followed_corruption,
               twin_copied_evidence=twin.copied_evidence, twin_copied_corrupted=twin.copied_corrupted,
               switched_to_evidence=row["copied_evidence"] and switched,
               switched_to_corruption=row["_copied_misleading"] and switched,
               twin_margin=label_margin(other["_pred"].scores),
               _twin_right=other["_right"])


def attribution_table(cell_dir: Path) -> pa.Table | None:
    """The cell's ``attribution.parquet`` as written (`ATTRIBUTION_SCHEMA`), ``None`` when the cell has none;
    an unreadable file is a `DataError` naming it. The one reader of the file: the explorer checks and
    decodes what it shows from this table (`biorab.explorer.attribution_file`)."""
    import pyarrow.parquet as pq

    from biorab.common.errors import DataError

    path = cell_dir / ATTRIBUTION_FILE
    if not path.is_file():
        return None
    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise DataError(f"unreadable attribution ({e})", path=path) from e


def read_attribution(cell_dir: Path) -> dict[str, dict[str, Any]]:
    """The cell's attribution rows by instance id (empty when the cell has no ``attribution.parquet``)."""
    table = attribution_table(cell_dir)
    return {r["id"]: r for r in table.to_pylist()} if table is not None else {}


#: The predictions columns `_cell_rows` reads (`row_prediction`, `row_hits`, the gold, the reasoning): not
#: the prompt, fields or constraint, which are most of a row's bytes.
_READ: tuple[str, ...] = ("id", "label", "hits", "gen_text", "gen_reasoning", "pred_label", "pred_ok",
                          "pred_scores")


def _cell_rows(result: CellResult, memo: dict[tuple[Any, ...], Any]) -> list[dict[str, Any]]:
    """One attribution row per instance of the cell, in slice order (``_right``, ``_clean``: helpers)."""
    import pyarrow.parquet as pq

    from biorab.common.labels import LABELS
    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.ral.specs.rows import row_hits, row_prediction
    from biorab.tasks import get_task

    plan = result.plan
    evidence = cell_evidence(plan, memo=memo)
    table = pq.read_table(result.predictions_path, columns=list(_READ)).to_pylist()
    preds = [row_prediction(r) for r in table]
    golds = [r["label"] for r in table]
    right = get_task(plan.task).score_table(golds, preds, labels=LABELS.get(evidence.dataset),
                           triple_matching=triple_matching_for(plan.parser)).correct
    out = []
    for row, pred, ok in zip(table, preds, right, strict=True):
        hits = row_hits(row)
        tags = evidence.tags(hits)
        flags = answer_flags(plan.task, row["label"], pred, hits, tags)
        for tag, misleading in zip(tags, flags.misleading, strict=True):
            tag["misleading"] = misleading
        failed = not pred.ok
        # null without reasoning text, or without a misleading hit (nothing to quote)
        quoted = quotes_corruption(row.get("gen_reasoning"), flags.changed) if flags.misleading_evidence \
            else None
        out.append({
            # A parse failure is a wrong answer (`parse_failed` says why); only a missing gold leaves it null.
            "id": row["id"], "correct": bool(ok) and not failed if row["label"] else None,
            "parse_failed": failed, "has_corrupted": flags.has_corrupted,
            "misleading_evidence": flags.misleading_evidence,
            "first_misleading_rank": flags.first_misleading_rank,
            "followed_corruption": flags.followed_corruption, "copied_evidence": flags.copied_evidence,
            "copied_corrupted": flags.copied_corrupted, "leaked_evidence": any(t["leaked"] for t in tags),
            "error_types": error_types_json(flags.error_types),
            "hit_tags": json.dumps(tags, ensure_ascii=False), "_right": bool(ok) and not failed,
            "_clean": flags.clean_evidence, "_labeled": any(h.value is not None for h in hits),
            "_errors": flags.error_types, "_pred": pred, "_gold": row["label"], "_hits": hits,
            "_tag_list": tags,
            "_items": flags.items, "_copied_misleading": flags.copied_misleading,
            "reasoning_quotes_corruption": quoted,
            "named_lie_followed": None if quoted is None else quoted and flags.followed_corruption,
        })
        _pair(plan.task, out[-1], None, None)
    return out


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    import pyarrow.parquet as pq

    from biorab.common.atomic_files import atomic_path

    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ATTRIBUTION_SCHEMA.names
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pylist([{c: r[c] for c in columns} for r in rows],
                                            schema=ATTRIBUTION_SCHEMA), tmp)


def _add_rates(result: CellResult, rows: list[dict[str, Any]], twin_rows: dict[str, dict[str, Any]], *,
               n_boot: int, seed: int) -> None:
    """The cell's rates (docs/metrics.md: each numerator over its denominator) and their counts."""
    from biorab.metrics.paired import mcnemar

    def col(name: str) -> list[bool]:
        return [bool(r[name]) for r in rows]

    everyone = [True] * len(rows)
    corrupted, misleading, followed, paired = (col("has_corrupted"), col("misleading_evidence"),
                                               col("followed_corruption"), col("_paired"))
    columns: dict[str, tuple[list[bool], ...]] = {}
    extra: dict[str, Any] = {"instances": len(rows), "with_corrupted": sum(corrupted),
                             "with_misleading": sum(misleading),
                             AGREES: sum(c and not m for c, m in zip(corrupted, misleading, strict=True)),
                             "misled": sum(followed), "with_clean_evidence": sum(col("_clean")),
                             "leaked_evidence": sum(col("leaked_evidence"))}
    if result.plan.retrieves:
        clean = col("_clean")
        columns.update({
            "misled_rate": (followed, misleading),
            "resisted_rate": (col("_right"), misleading),
            "copy_rate_clean": (col("copied_evidence"), clean),
            "copy_rate_corrupted": (col("copied_corrupted"), corrupted),
            AGREES: ([c and not m for c, m in zip(corrupted, misleading, strict=True)], corrupted),
            MISLED_SHARE: (followed, everyone),
        })
        ranks = [_rank_name(r["first_misleading_rank"]) for r in rows]
        extra["by_rank"] = {}
        for name in RANKS:
            at = [k == name for k in ranks]
            columns[BY_RANK + name] = (followed, at)
            extra["by_rank"][name] = {"n": sum(at),
                                      "misled": sum(f and a for f, a in zip(followed, at, strict=True))}
        extra["baseline"] = rows[0]["twin_cell_id"] if rows and any(paired) else NO_BASELINE
    thought = [r["reasoning_quotes_corruption"] is not None for r in rows]
    if result.plan.retrieves and any(thought):
        quoted, named = col("reasoning_quotes_corruption"), col("named_lie_followed")
        columns["quoted_corruption_rate"] = (quoted, thought)
        columns["named_lie_followed_rate"] = (named, thought)
        extra["reasoning"] = {"misleading_with_reasoning": sum(thought), "quoted_corruption": sum(quoted),
                              "named_lie_followed": sum(named)}
    if result.plan.retrieves and any(paired):
        _twin_rates(rows, columns, extra, followed, misleading, corrupted, paired)
    if any(paired):
        columns["helped_rate"] = ([r["flip"] == HELPED for r in rows], paired)
        columns["hurt_rate"] = ([r["flip"] == HURT for r in rows], paired)
        pairs = [(twin_rows[r["id"]]["_right"], r["_right"]) for r in rows if r["_paired"]]
        test = mcnemar([a for a, _ in pairs], [b for _, b in pairs])
        extra.update(twin_cell_id=rows[0]["twin_cell_id"], paired=len(pairs),
                     helped=test.only_b, hurt=test.only_a,
                     mcnemar={"statistic": test.statistic, "p_value": test.p_value, "method": test.method})
    errors = [r["_errors"] for r in rows]
    if any(e is not None for e in errors):
        names = sorted({name for e in errors if e for name in e})
        totals = sum((Counter(e) for e in errors if e), Counter())
        extra["error_types"] = {name: totals.get(name, 0) for name in names}
        for name in names:
            columns[ERROR_RATE + name] = ([bool(e and e.get(name)) for e in errors], everyone)
    if not columns:
        return
    result.metrics.update({k: v.to_json() for k, v in rates(columns, n_boot=n_boot, seed=seed).items()})
    if "mcnemar" in extra:
        result.metrics[MCNEMAR_P] = {"value": extra["mcnemar"]["p_value"], "ci_low": None, "ci_high": None}
    result.extra["attribution"] = extra


def _twin_rates(rows: list[dict[str, Any]], columns: dict[str, tuple[list[bool], ...]],
                extra: dict[str, Any], followed: list[bool], misleading: list[bool], corrupted: list[bool],
                paired: list[bool]) -> None:
    """The rates against the twin, over the paired instances of each denominator: the twin's answer flagged
    against this cell's hits, the paired excess (cell − twin), the switches, and the misled rate per prior
    bin."""
    def both(a: list[bool]) -> list[bool]:
        return [x and p for x, p in zip(a, paired, strict=True)]

    def col(name: str) -> list[bool]:
        return [bool(r[name]) for r in rows]

    twin_followed = col("twin_followed_corruption")
    on_misleading, on_clean, on_corrupted = both(misleading), both(col("_clean")), both(corrupted)
    columns.update({
        "misled_rate_twin": (twin_followed, on_misleading),
        "misled_excess": (followed, twin_followed, on_misleading),
        "switched_to_evidence": (col("switched_to_evidence"), both(col("_labeled"))),
        "switched_to_corruption": (col("switched_to_corruption"), on_misleading),
        "copy_rate_clean_twin": (col("twin_copied_evidence"), on_clean),
        "copy_rate_clean_excess": (col("copied_evidence"), col("twin_copied_evidence"), on_clean),
        "copy_rate_corrupted_twin": (col("twin_copied_corrupted"), on_corrupted),
        "copy_rate_corrupted_excess": (col("copied_corrupted"), col("twin_copied_corrupted"), on_corrupted),
    })
    bins = [r["prior_bin"] for r in rows]
    present = [b for b in PRIOR_BINS if b in bins]
    extra.update(twin_misled=sum(t and m for t, m in zip(twin_followed, on_misleading, strict=True)),
                 switched_to_evidence=sum(col("switched_to_evidence")),
                 switched_to_corruption=sum(col("switched_to_corruption")),
                 prior={"signal": "twin correctness" if set(present) <= set(CORRECTNESS_BINS)
                        else "label log-prob margin", "bins": {}})
    for name in present:
        at = [b == name for b in bins]
        columns[BY_PRIOR + name] = (followed, both([a and m for a, m in zip(at, misleading, strict=True)]))
        extra["prior"]["bins"][name] = {
            "n": sum(at), "misleading": sum(a and m for a, m in zip(at, on_misleading, strict=True)),
            "misled": sum(a and m and f for a, m, f in zip(at, on_misleading, followed, strict=True))}


def _rank_name(rank: int | None) -> str | None:
    return None if rank is None else RANKS[min(rank, len(RANKS)) - 1]
