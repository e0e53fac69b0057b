"""Metrics with CIs computed from the rows on disk (never from in-memory state), so a resumed run and an
uninterrupted run report identical numbers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa

from biorab.common.atomic_files import atomic_path, write_text_atomic
from biorab.common.errors import BioRABError
from biorab.common.labels import LABELS
from biorab.common.records import Example
from biorab.ral.specs.cell_records import CellPlan, CellResult
from biorab.ral.specs.rows import row_error, row_hits, row_prediction
from biorab.runner.store.instance_key import example_key, instance_key
from biorab.runner.store.shards import latest_rows, read_all_table

#: The metrics a probing cell adds (names of `biorab.metrics.awareness`).
AWARENESS_METRICS = ("true_negative_awareness_rate", "false_negative_awareness_rate")


#: What choosing a cell's rows reads of every row on disk: the instance key's columns
#: (`biorab.runner.store.instance_key`), the error columns and the write time (`latest_rows`).
_CHOOSE: tuple[str, ...] = ("task", "dataset", "split", "text", "label", "fields", "corpus_key", "gen_error",
                            "probe_gen_error", "written_at")
#: What scoring reads of the chosen rows (not the prompt or constraint, most of a row's bytes).
_SCORE: tuple[str, ...] = ("id", "text", "label", "hits", "gen_text", "gen_error", "probe_gen_error",
                           "gen_label_logprobs", "pred_label", "pred_ok", "pred_scores", "probe_prompt",
                           "probe_judgement")


def final_rows(plan: CellPlan, examples: list[Example], cells_dir: Path) -> list[dict[str, Any]]:
    """One row per instance of the slice, in slice order; an instance without any row is an error."""
    from biorab.ral.specs.rows import from_table

    return from_table(final_table(plan, examples, cells_dir))


def final_table(plan: CellPlan, examples: list[Example], cells_dir: Path) -> pa.Table:
    """`final_rows` as an Arrow table of the row schema: the rows are chosen from `_CHOOSE` alone and taken
    from the shards in Arrow, so a cell's prompts, hits and answers never become Python objects here (the
    driver's memory stays flat in a cell's rows, issue 45)."""
    table = read_all_table(cells_dir / plan.cell_id)
    chosen = table.select(list(_CHOOSE)).to_pylist()
    for i, row in enumerate(chosen):
        row["_index"] = i
    best = latest_rows(chosen, key=instance_key)
    keys = [example_key(ex, plan.corpus_key) for ex in examples]  # rows of an edited corpus never count
    missing = [ex.id for ex, k in zip(examples, keys, strict=True) if k not in best]
    if missing:
        raise BioRABError(f"cell {plan.label}: {len(missing)} instance(s) have no output row "
                          f"(first: {missing[0]}); run again with --resume to compute them")
    out = table.take(pa.array([best[k]["_index"] for k in keys], pa.int64()))
    # each reused row relabelled with the current example's id, order and source line (`current_row`)
    for name, values, kind in (("id", [ex.id for ex in examples], pa.string()),
                               ("order", list(range(len(examples))), pa.int64()),
                               ("source_line", [ex.source_line for ex in examples], pa.int64())):
        out = out.set_column(out.schema.get_field_index(name), name, pa.array(values, kind))
    return out.combine_chunks()


def score_cell(
    plan: CellPlan, examples: list[Example], cells_dir: Path, out_dir: Path, *, n_boot: int, seed: int
) -> CellResult:
    """Consolidate the cell's rows into ``out_dir/predictions/<cell_id>.parquet`` and score them."""
    import pyarrow.parquet as pq

    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.tasks import get_task

    dataset, retrieval = plan.dataset_setting()
    table = final_table(plan, examples, cells_dir)
    path = out_dir / "predictions" / f"{plan.cell_id}.parquet"
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    rows = table.select(list(_SCORE)).to_pylist()
    del table
    golds = [r["label"] for r in rows]
    preds = [row_prediction(r) for r in rows]
    report = get_task(plan.task).score(golds, preds, labels=LABELS.get(dataset), n_boot=n_boot, seed=seed,
                   triple_matching=triple_matching_for(plan.parser))
    payload = report.to_json()
    metrics, extra = dict(payload["metrics"]), {}
    if retrieval.retrieves:
        extra["leak_share"] = leak_share_json(rows)
    if retrieval.probes:
        awareness = score_awareness(plan, rows, preds, n_boot=n_boot, seed=seed)
        metrics.update(awareness["metrics"])
        extra["awareness_counts"] = awareness["counts"]
    abstention = score_abstention(plan, rows, preds, n_boot=n_boot, seed=seed)
    if abstention is not None:
        metrics.update(abstention["metrics"])
        extra["abstention"] = {"counts": abstention["counts"], "reliability": abstention["reliability"]}
    failures = sum(row_error(r) is not None for r in rows)
    # A failed generation is reported as a failure, not also as an unparsable answer.
    unparsed = sum(not p.ok for r, p in zip(rows, preds, strict=True) if r["gen_error"] is None)
    return CellResult(plan, payload["n"], metrics, unparsed, failures, path, extra)


def leak_share_json(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The share of the cell's queries whose hits include their own text (`biorab.retrieval.own_text`):
    ``{"value": leaking / queries, "leaking": .., "queries": ..}`` (value ``None`` for no query)."""
    from biorab.retrieval.own_text import leak_share

    leaking, queries = leak_share((r["text"], row_hits(r)) for r in rows)
    return {"value": leaking / queries if queries else None, "leaking": leaking, "queries": queries}


def score_awareness(
    plan: CellPlan, rows: list[dict[str, Any]], preds: list[Any], *, n_boot: int, seed: int
) -> dict[str, Any]:
    """The negative-awareness rates of a probing cell, from its rows.

    An instance is a true negative when its task output is wrong and a false negative when it is right
    (per-instance correctness of `biorab.metrics`: label equality; for triples the predicted set equals
    the gold set). Its judgement is the parsed probe answer (``None``: unparsable or a failed probe, which
    counts as unaware). Instances without a probe (no retrieved example) are left out, counted as
    ``not_probed``. The answers are read with the metric's default mapping, the one the probe asks for.
    """
    from biorab.metrics import negative_awareness
    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.tasks import get_task

    golds = [r["label"] for r in rows]
    correct = get_task(plan.task).score_table(golds, preds, labels=LABELS.get(plan.dataset_setting()[0]),
                             triple_matching=triple_matching_for(plan.parser)).correct
    asked = [i for i, r in enumerate(rows) if r["probe_prompt"] is not None]
    judgements = [rows[i]["probe_judgement"] for i in asked]
    report = negative_awareness([bool(correct[i]) for i in asked], judgements, n_boot=n_boot, seed=seed)
    payload = report.to_json()
    payload["counts"]["not_probed"] = len(rows) - len(asked)
    return payload


def score_abstention(
    plan: CellPlan, rows: list[dict[str, Any]], preds: list[Any], *, n_boot: int, seed: int
) -> dict[str, Any] | None:
    """The abstention metrics of a cell (`biorab.metrics.selective`, docs/metrics.md § Knowing when to
    abstain) from its rows: the label log-probs of ``gen_label_logprobs`` and, in a probing cell, the probe's
    ``probe_judgement`` (asked where ``probe_prompt`` is set); ``None`` when the cell has neither.
    Correctness is `score_awareness`'s (per-instance correctness of `biorab.metrics`)."""
    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.metrics.selective import abstention_report
    from biorab.tasks import get_task

    scores = [_label_logprobs(plan.label, r) for r in rows]
    probing = plan.dataset_setting()[1].probes
    if not any(scores) and not probing:
        return None
    golds = [r["label"] for r in rows]
    correct = get_task(plan.task).score_table(golds, preds, labels=LABELS.get(plan.dataset_setting()[0]),
                             triple_matching=triple_matching_for(plan.parser)).correct
    probe = ([r["probe_prompt"] is not None for r in rows], [r["probe_judgement"] for r in rows]) \
        if probing else None
    report = abstention_report([bool(c) for c in correct], golds, scores, probe, n_boot=n_boot, seed=seed)
    if not report.metrics:
        return None
    return {"metrics": {k: v.to_json() for k, v in report.metrics.items()}, "counts": report.counts,
            "reliability": report.reliability}


def _label_logprobs(cell: str, row: dict[str, Any]) -> dict[str, float] | None:
    """A row's label log-probs (``None``: not scored, or a failed generation)."""
    raw = row.get("gen_label_logprobs")
    if raw is None or row.get("gen_error") is not None:
        return None
    try:
        scores = json.loads(raw)
        parsed = {str(k): float(v) for k, v in scores.items()}
    except (ValueError, TypeError, AttributeError) as e:
        raise BioRABError(f"cell {cell}, row {row.get('id')!r}: field gen_label_logprobs is not a JSON "
                          f"object of label -> log-prob ({e}): {raw[:200]!r}") from e
    return parsed or None


def write_summary(
    results: list[CellResult], stats: dict[str, Any], run_dir: Path, *, sections: dict[str, Any] | None = None
) -> Path:
    """``summary.json``: per-cell results, execution counts and each experiment source's run-level section
    (e.g. ``drugmech``: the accuracy report per file × world/mode over runs, groups with BCa CIs, pairs)."""
    path = run_dir / "summary.json"
    payload: dict[str, Any] = {"cells": [r.to_json() for r in results], "execution": stats}
    payload.update(sections or {})
    payload["complete"] = not any(r.incomplete for r in results)
    write_text_atomic(path, json.dumps(payload, indent=2))
    return path
