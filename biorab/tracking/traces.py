"""MLflow traces of a cell's instances, written from the rows on disk: one trace per sampled instance, with
a RETRIEVER span (the hits: documents with their scores and ranks), an LLM span (the prompt as a chat
message, the raw generation as the answer) and a PARSER span (the parsed label), under one root span.

The traces are built from what the run recorded, not by tracing the live pipeline: a trace shows exactly
the row a metric was computed from, and the Ray actors that generate need no tracing set-up. So the spans'
times are the row's write time (the pipeline does not time each stage per row); their durations are not
measurements.

Traces are keyed: each carries the tag ``biorab.trace_key`` = ``<child run key>#<instance id>``, and the
traces already linked to the child run are read once before writing, so a resume, a rerun or
``biorab track`` never adds a second trace for an instance. The sample is the cell's first `n` instances
in dataset order (``order``), the same on every run.

Each new trace also gets MLflow 3 assessments, so the Traces and Evaluation pages filter by them: the gold
as the expectation ``expected_answer``, and as feedback (source ``CODE``, ``biorab.attribution``) the
verdict ``correct``, the ``misled`` flag (``followed_corruption``) and the ``flip`` against the no-retrieval
twin, read from the cell's ``attribution.parquet`` (a row's ``attribution``; none without it).

Spans are written with the store's batch call (``log_spans``, all traces of a cell in one transaction)
and each trace's header with ``start_trace``: no OpenTelemetry tracer, exporter thread or global tracking
URI is involved, so the writes go to the run's own store and cost milliseconds per trace.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

TRACE_KEY = "biorab.trace_key"
_READ = ["id", "order", "text", "label", "hits", "prompt", "gen_text", "gen_error", "gen_prompt_tokens",
         "gen_completion_tokens", "gen_finish_reason", "gen_cached", "pred_label", "pred_ok", "written_at",
         "gen_reasoning"]


def _message(row: dict[str, Any]) -> dict[str, Any]:
    """The assistant message of the generate span; a thinking model's reasoning beside the answer."""
    message = {"role": "assistant", "content": row.get("gen_text") or ""}
    if row.get("gen_reasoning") is not None:
        message["reasoning_content"] = row["gen_reasoning"]
    return message


def sample_rows(predictions: Path, n: int) -> list[dict[str, Any]]:
    """The first `n` rows of a cell in dataset order (rows without a generation are left out)."""
    import pyarrow.parquet as pq

    if n <= 0:
        return []
    names = set(pq.read_schema(predictions).names)
    rows = pq.read_table(predictions, columns=[c for c in _READ if c in names]).to_pylist()
    rows = [r for r in rows if r.get("gen_text") is not None or r.get("gen_error")]
    return sorted(rows, key=lambda r: r.get("order") or 0)[:n]


def with_attribution(rows: list[dict[str, Any]], cell_dir: Path) -> list[dict[str, Any]]:
    """`rows`, each with its ``attribution`` row (`biorab.attribution.cell_attribution.read_attribution`)
    when the cell
    has one."""
    from biorab.attribution.cell_attribution import read_attribution

    found = read_attribution(cell_dir)
    return [{**row, "attribution": found.get(row["id"])} for row in rows]


def trace_key(run_key: str, instance_id: str) -> str:
    return f"{run_key}#{instance_id}"


def existing_keys(tracing: Any, experiment_id: str, run_id: str) -> set[str]:
    """The trace keys already linked to `run_id` (one search, without spans)."""
    keys: set[str] = set()
    token = None
    while True:
        page = tracing.search_traces(locations=[experiment_id], run_id=run_id, include_spans=False,
                                     max_results=500, page_token=token)
        keys |= {t.info.tags[TRACE_KEY] for t in page if TRACE_KEY in t.info.tags}
        token = page.token
        if not token:
            return keys


def log_cell_traces(tracing: Any, experiment_id: str, run_id: str, run_key: str, *, cell_label: str,
                    model: str, rows: Iterable[dict[str, Any]], new_run: bool = False) -> int:
    """Write the traces of `rows` not yet on the run (`new_run`: the run was just created, so it has none
    and the search is skipped); returns how many were written."""
    have = set() if new_run else existing_keys(tracing, experiment_id, run_id)
    todo = [r for r in rows if trace_key(run_key, r["id"]) not in have]
    if not todo:
        return 0
    built = [_trace(experiment_id, run_id, run_key, cell_label, model, r) for r in todo]
    tracing.log_spans(experiment_id, [span for _info, spans in built for span in spans])
    for info, _spans in built:
        tracing.start_trace(info)
    for (info, _spans), row in zip(built, todo, strict=True):
        for assessment in assessments(row):
            tracing.log_assessment(info.trace_id, assessment)
    return len(built)


#: The feedback names on a trace and the ``attribution.parquet`` column each comes from.
FEEDBACK = {"correct": "correct", "misled": "followed_corruption", "flip": "flip"}


def assessments(row: dict[str, Any]) -> list[Any]:
    """The gold as an expectation, and the verdict (a parse failure: ``false``), the misled flag (only on
    instances whose evidence holds a misleading hit) and the flip as feedback (a value the row's
    attribution leaves null is not logged)."""
    from mlflow.entities import AssessmentSource, AssessmentSourceType, Expectation, Feedback

    source = AssessmentSource(source_type=AssessmentSourceType.CODE, source_id="biorab.attribution")
    out: list[Any] = []
    if row.get("label") is not None:
        out.append(Expectation(name="expected_answer", value=row["label"], source=source))
    attribution = row.get("attribution") or {}
    for name, column in FEEDBACK.items():
        # `misled` only where the evidence could mislead: elsewhere "not misled" would be no finding.
        if name == "misled" and not attribution.get("misleading_evidence"):
            continue
        if attribution.get(column) is not None:
            out.append(Feedback(name=name, value=attribution[column], source=source))
    return out


def log_served_trace(tracing: Any, experiment_id: str, *, name: str, model: str, row: dict[str, Any],
                     tags: dict[str, str]) -> str:
    """Write one served answer (`row`: a run row's columns, `biorab.ral.specs.rows`) as a trace with the same
    spans as a run's (root, RETRIEVER, LLM, PARSER), named `name` (the served RAL), with `tags`; no run is
    linked. Returns its trace id."""
    info, spans = _trace(experiment_id, None, f"serve/{name}", name, model, row)
    info.tags.update(tags)
    tracing.log_spans(experiment_id, spans)
    tracing.start_trace(info)
    return str(info.trace_id)


def _ids(key: str) -> tuple[int, list[int]]:
    """A 128-bit trace id and 64-bit span ids derived from the trace key (stable across reruns)."""
    digest = hashlib.sha256(key.encode()).digest()
    span_ids = [int.from_bytes(hashlib.sha256(digest + bytes([i])).digest()[:8], "big") or 1
                for i in range(4)]
    return int.from_bytes(digest[:16], "big") or 1, span_ids


def _trace(experiment_id: str, run_id: str | None, run_key: str, cell_label: str, model: str,
           row: dict[str, Any]) -> tuple[Any, list[Any]]:
    from mlflow.entities import SpanType, TraceInfo, TraceLocation, TraceState
    from mlflow.tracing.constant import TRACE_REQUEST_ID_PREFIX, TraceMetadataKey, TraceTagKey
    from mlflow.tracing.utils import encode_trace_id

    key = trace_key(run_key, row["id"])
    otel_trace_id, (root, retrieve, generate, parse) = _ids(key)
    trace_id = TRACE_REQUEST_ID_PREFIX + encode_trace_id(otel_trace_id)
    t_ns = int(float(row.get("written_at") or 0.0) * 1e9)
    hits = json.loads(row.get("hits") or "[]")
    answer = {"prediction": row.get("pred_label"), "parsed": bool(row.get("pred_ok")),
              "gold": row.get("label")}
    question = {"id": row["id"], "input": row.get("text") or ""}
    spans = [_span(trace_id, otel_trace_id, root, None, cell_label, SpanType.CHAIN, question, answer, t_ns,
                   {"biorab.cell": cell_label, "biorab.error": row.get("gen_error") or ""})]
    if hits:
        spans.append(_span(trace_id, otel_trace_id, retrieve, root, "retrieve", SpanType.RETRIEVER,
                           {"query": row.get("text") or "", "k": len(hits)}, [_document(h) for h in hits],
                           t_ns, {}))
    spans.append(_span(trace_id, otel_trace_id, generate, root, "generate", SpanType.LLM,
                       {"messages": [{"role": "user", "content": row.get("prompt") or ""}]},
                       {"choices": [{"index": 0, "finish_reason": row.get("gen_finish_reason"), "message":
                                     _message(row)}]},
                       t_ns, {"model": model, "cached": bool(row.get("gen_cached")),
                              "mlflow.chat.tokenUsage": {
                                  "input_tokens": int(row.get("gen_prompt_tokens") or 0),
                                  "output_tokens": int(row.get("gen_completion_tokens") or 0),
                                  "total_tokens": int(row.get("gen_prompt_tokens") or 0)
                                  + int(row.get("gen_completion_tokens") or 0)}}))
    spans.append(_span(trace_id, otel_trace_id, parse, root, "parse", SpanType.PARSER,
                       {"text": row.get("gen_text") or ""}, answer, t_ns, {}))
    info = TraceInfo(
        trace_id=trace_id, trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=t_ns // 1_000_000, execution_duration=0, state=TraceState.OK,
        request_preview=(row.get("text") or "")[:1000], response_preview=_preview(row),
        trace_metadata={TraceMetadataKey.SOURCE_RUN: run_id} if run_id else {},
        tags={TRACE_KEY: key, TraceTagKey.TRACE_NAME: cell_label, "biorab.instance": row["id"]})
    return info, spans


def _preview(row: dict[str, Any]) -> str:
    """What the traces list shows as the output: the parsed answer, else why there is none."""
    if row.get("gen_error"):
        return f"generation failed: {row['gen_error']}"[:1000]
    if row.get("pred_ok"):
        return str(row.get("pred_label"))
    return f"unparsed: {row.get('gen_text') or ''}"[:1000]


def _document(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit as MLflow's retriever document (the UI lists `page_content` with its metadata)."""
    return {"id": hit.get("doc_id"), "page_content": hit.get("key") or "",
            "metadata": {"doc_uri": hit.get("doc_id"), "score": hit.get("score"), "rank": hit.get("rank"),
                         "label": hit.get("value"), "dataset": hit.get("dataset", "")}}


def _span(trace_id: str, otel_trace_id: int, span_id: int, parent_id: int | None, name: str, span_type: str,
          inputs: Any, outputs: Any, t_ns: int, attributes: dict[str, Any]) -> Any:
    from mlflow.entities import Span
    from mlflow.tracing.constant import SpanAttributeKey
    from mlflow.tracing.utils import build_otel_context, dump_span_attribute_value
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import Status, StatusCode

    attrs = {SpanAttributeKey.REQUEST_ID: trace_id, SpanAttributeKey.SPAN_TYPE: span_type,
             SpanAttributeKey.INPUTS: inputs, SpanAttributeKey.OUTPUTS: outputs, **attributes}
    otel = ReadableSpan(
        name=name, context=build_otel_context(otel_trace_id, span_id),
        parent=build_otel_context(otel_trace_id, parent_id) if parent_id is not None else None,
        start_time=t_ns, end_time=t_ns, status=Status(StatusCode.OK), resource=Resource.get_empty(),
        attributes={k: dump_span_attribute_value(v) for k, v in attrs.items()})
    return Span(otel)
