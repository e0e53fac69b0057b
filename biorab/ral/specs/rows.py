"""The one row schema that flows through every pipeline stage and into the Parquet output.

Every stage fills some columns of the same schema (the rest stay null), so Ray Data blocks from different
stages and batches always concatenate, and the output files of different runs read back as one table.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa

from biorab.common.records import Example, Generation, Hit, Prediction, Prompt

ROW_SCHEMA = pa.schema(
    [
        ("cell_id", pa.string()),
        ("order", pa.int64()),  # 0-based position in the dataset slice; sorts rows canonically
        ("id", pa.string()),
        ("task", pa.string()),
        ("dataset", pa.string()),
        ("split", pa.string()),
        ("text", pa.string()),
        ("label", pa.string()),
        ("fields", pa.string()),
        ("source_line", pa.int64()),
        # Digest of the files the cell's retrieval corpus was built from when the row was planned (null for
        # cells that retrieve nothing): part of the row's resume key, `biorab.runner.store.instance_key`.
        ("corpus_key", pa.string()),
        ("hits", pa.string()),  # JSON list of Hit rows
        ("retrieval_cached", pa.bool_()),
        ("prompt", pa.string()),
        ("stop", pa.string()),
        ("constraint", pa.string()),
        ("gen_key", pa.string()),
        ("gen_text", pa.string()),
        ("gen_prompt_tokens", pa.int64()),
        ("gen_completion_tokens", pa.int64()),
        ("gen_finish_reason", pa.string()),
        ("gen_label_logprobs", pa.string()),
        ("gen_error", pa.string()),
        ("gen_cached", pa.bool_()),
        ("gen_batch_size", pa.int64()),
        ("gen_reasoning", pa.string()),  # a thinking model's reasoning, apart from the answer in gen_text
        ("gen_reasoning_tokens", pa.int64()),
        ("pred_label", pa.string()),
        ("pred_ok", pa.bool_()),
        ("pred_scores", pa.string()),
        # The negative-awareness probe (cells with `awareness_probe`; null elsewhere): its prompt, its
        # generation, and the parsed True/False judgement (null when unparsable or not asked).
        ("probe_prompt", pa.string()),
        ("probe_gen_key", pa.string()),
        ("probe_gen_text", pa.string()),
        ("probe_gen_error", pa.string()),
        ("probe_gen_cached", pa.bool_()),
        ("probe_judgement", pa.string()),
        ("attempt", pa.string()),  # id of the `biorab run` invocation that wrote the row
        ("written_at", pa.float64()),
    ]
)
COLUMNS: tuple[str, ...] = tuple(ROW_SCHEMA.names)


def example_row(cell_id: str, order: int, example: Example, corpus_key: str | None = None) -> dict[str, Any]:
    """The initial row of one instance in one cell (every later column null); `corpus_key`: the cell's
    (`CellPlan.corpus_key`)."""
    row: dict[str, Any] = dict.fromkeys(COLUMNS)
    row.update(example.to_row())
    row.update(cell_id=cell_id, order=order, corpus_key=corpus_key)
    return row


def to_table(rows: Sequence[dict[str, Any]]) -> pa.Table:
    """Rows → an Arrow table with exactly `ROW_SCHEMA` (missing columns become null)."""
    return pa.Table.from_pylist([{c: r.get(c) for c in COLUMNS} for r in rows], schema=ROW_SCHEMA)


def from_table(table: pa.Table) -> list[dict[str, Any]]:
    return [{c: r.get(c) for c in COLUMNS} for r in table.to_pylist()]


def row_example(row: dict[str, Any]) -> Example:
    return Example.from_row(row)


def row_hits(row: dict[str, Any]) -> list[Hit]:
    return [Hit.from_row(h) for h in json.loads(row["hits"] or "[]")]


def hits_json(hits: Iterable[Hit]) -> str:
    return json.dumps([h.to_row() for h in hits], ensure_ascii=False)


def row_prompt(row: dict[str, Any]) -> Prompt:
    return Prompt.from_row({"example_id": row["id"], "text": row["prompt"], "stop": row["stop"],
                            "constraint": row["constraint"]})


def set_prompt(row: dict[str, Any], prompt: Prompt) -> None:
    packed = prompt.to_row()
    row.update(prompt=packed["text"], stop=packed["stop"], constraint=packed["constraint"])


def set_generation(row: dict[str, Any], gen: Generation, *, key: str, cached: bool) -> None:
    row.update({f"gen_{k}": v for k, v in gen.to_row().items()}, gen_key=key, gen_cached=cached)


def row_generation(row: dict[str, Any]) -> Generation:
    return Generation.from_row({k[4:]: v for k, v in row.items() if k.startswith("gen_")})


def set_prediction(row: dict[str, Any], pred: Prediction) -> None:
    packed = pred.to_row()
    row.update(pred_label=packed["label"], pred_ok=packed["ok"], pred_scores=packed["scores"])


def row_prediction(row: dict[str, Any]) -> Prediction:
    return Prediction.from_row(
        {"label": row["pred_label"], "raw": row["gen_text"] or "", "ok": bool(row["pred_ok"]),
         "scores": row["pred_scores"]}
    )


def set_probe(
    row: dict[str, Any], prompt: Prompt, gen: Generation, *, key: str, cached: bool, judgement: str | None
) -> None:
    row.update(probe_prompt=prompt.text, probe_gen_key=key, probe_gen_text=gen.text,
               probe_gen_error=gen.error, probe_gen_cached=cached, probe_judgement=judgement)


def row_error(row: dict[str, Any]) -> str | None:
    """The row's first failed generation (task, then probe), or ``None`` when every generation succeeded."""
    task_error = row.get("gen_error")
    return task_error if task_error is not None else row.get("probe_gen_error")


def stamp(rows: Iterable[dict[str, Any]], attempt: str) -> None:
    now = time.time()
    for row in rows:
        row.update(attempt=attempt, written_at=now)
