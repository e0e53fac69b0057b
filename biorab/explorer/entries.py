"""One row of one cell as the explorer holds it: a small integer code for the filters (loaded for every
row when the page opens) and the full detail (loaded with the instance when it is opened).

The code packs what the filters ask of a row (see ``explorer.js``, `decode`, which reads it back):
bits 0-6 flags, bits 8-9 the verdict, bits 10-11 the flip against the no-retrieval twin, bits 12-13 the
negative-awareness probe's answer."""

from __future__ import annotations

import json
from typing import Any

from biorab.tasks import AWARENESS_LABELS

PARSE_FAILED, MISLED, HAS_CORRUPTED, LEAKED, COPIED, GEN_ERROR, ATTRIBUTED = (1 << i for i in range(7))
VERDICT_SHIFT, FLIP_SHIFT, PROBE_SHIFT = 8, 10, 12
VERDICTS = {True: 1, False: 2}  # 0: unknown (no attribution or no gold); a parse failure is wrong
FLIP_CODES = {"helped": 1, "hurt": 2, "unchanged": 3}  # 0: the cell has no twin, or no attribution
# The probe's answer: 0 not asked, then each awareness label, then "asked but unparsable"
PROBE_CODES = {label: i + 1 for i, label in enumerate(AWARENESS_LABELS)}
PROBE_UNPARSED = len(AWARENESS_LABELS) + 1


def row_code(row: dict[str, Any], attribution: dict[str, Any] | None) -> int:
    """The filter code of `row` (a row of `biorab.ral.specs.rows.ROW_SCHEMA`) with its attribution (or
    None)."""
    failed = row["gen_error"] is not None
    code = GEN_ERROR if failed else 0
    if attribution is None:
        parse_failed = not failed and not row["pred_ok"]
    else:
        parse_failed = bool(attribution["parse_failed"])
        code |= ATTRIBUTED
        code |= MISLED if attribution["followed_corruption"] else 0
        code |= HAS_CORRUPTED if attribution["has_corrupted"] else 0
        code |= LEAKED if attribution["leaked_evidence"] else 0
        code |= COPIED if attribution["copied_evidence"] else 0
        code |= VERDICTS.get(attribution["correct"], 0) << VERDICT_SHIFT
        code |= FLIP_CODES.get(attribution["flip"] or "", 0) << FLIP_SHIFT
    code |= PARSE_FAILED if parse_failed else 0
    return code | _probe_code(row) << PROBE_SHIFT


def _probe_code(row: dict[str, Any]) -> int:
    if row["probe_prompt"] is None:
        return 0
    return PROBE_CODES.get(row["probe_judgement"] or "", PROBE_UNPARSED)


def row_detail(cell: int, row: dict[str, Any], attribution: dict[str, Any] | None) -> dict[str, Any]:
    """Everything the side-by-side view shows of one row; texts stay raw (the page shows them as text)."""
    hits = json.loads(row["hits"] or "[]")
    tags = (attribution or {}).get("hit_tags")
    detail: dict[str, Any] = {
        "cell": cell,
        "prompt": row["prompt"],
        "generation": row["gen_text"],
        "gen_error": row["gen_error"],
        "finish": row["gen_finish_reason"],
        "answer": row["pred_label"],
        "parsed": bool(row["pred_ok"]),
        "hits": [{"doc_id": h.get("doc_id"), "rank": h.get("rank"), "score": h.get("score"),
                  "key": h.get("key"), "value": h.get("value"), "dataset": h.get("dataset"),
                  "tags": tags[i] if tags is not None and i < len(tags) else None}
                 for i, h in enumerate(hits)],
        "probe_prompt": row["probe_prompt"],
        "probe_generation": row["probe_gen_text"],
        "probe_error": row["probe_gen_error"],
        "probe_answer": row["probe_judgement"],
        "attribution": None,
    }
    if attribution is not None:
        detail["attribution"] = {k: v for k, v in attribution.items() if k not in ("id", "hit_tags")}
    return detail
