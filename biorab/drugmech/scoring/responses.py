"""Score a responses file: JSONL rows ``{"query_file", "index", "response"}`` against their query files.

``query_file`` names a released file (stem or file name) or the path of a query file in the released schema
(e.g. a generated set), absolute or relative to the responses file's folder; ``index`` is the row's position.

Optional keys per row: ``world`` (``open``/``closed``, default open; counterfactuals), ``mode`` (factual
disease mode, default NAMED_DISEASE), ``run`` (int, default 0; several runs give mean ± CI) and
``finish_reason`` (anything but ``"stop"`` or null marks the response incomplete: it is counted as wrong
and reported separately). Any other key, a line that is not UTF-8 or not a JSON object, an unknown query
file, an index out of range or a repeated (file, index, world, mode, run) is an error naming the line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.common.errors import DataError
from biorab.common.file_sniffing import json_error_text
from biorab.drugmech.graph.moa import MoA
from biorab.drugmech.parsing.option_answer import ROBUST
from biorab.drugmech.prompts.factual import DISEASE_MODES, NAMED
from biorab.drugmech.prompts.moa_text import WORLDS, MoaLookup
from biorab.drugmech.queries.query_files import QueryFile
from biorab.drugmech.queries.resolver import resolve_query_file
from biorab.drugmech.scoring.correctness import SampleScore, incomplete_score, score_answer

REQUIRED_KEYS = ("query_file", "index", "response")
OPTIONAL_KEYS = ("world", "mode", "run", "finish_reason")


@dataclass(frozen=True)
class Response:
    """One line of a responses file (`line` is 1-based)."""

    query_file: str
    index: int
    response: str
    world: str
    mode: str
    run: int
    finish_reason: str | None
    line: int
    explicit: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ScoredRow:
    """A response with its verdict and the sample's kind."""

    response: Response
    query_type: str
    is_negative: bool
    link: str | None
    score: SampleScore
    query: Any = None  # the sample answered (its edited link: `biorab.drugmech.scoring.chain_depth`)

    def to_json(self) -> dict[str, Any]:
        """The row as ``--json`` prints it; world/mode/run appear only when the input gave them."""
        r, s = self.response, self.score
        row: dict[str, Any] = {
            "query_file": r.query_file,
            "index": r.index,
            "parsed": s.parsed,
            "option": s.option,
            "yes_no": s.yes_no,
            "interior_node_match": s.interior_node_match,
            "reduced_edge_match": s.reduced_edge_match,
            "correct_strict": s.correct_strict,
            "correct_relaxed": s.correct_relaxed,
        }
        for key in ("world", "mode", "run"):
            if key in r.explicit:
                row[key] = getattr(r, key)
        if s.incomplete:
            row["incomplete"] = True
        return row


def _field(
    obj: dict[str, Any],
    key: str,
    kind: type,
    path: Path,
    line: int,
    default: Any = None,
    *,
    nullable: bool = False,
) -> Any:
    value = obj.get(key, default)
    if value is None and nullable:
        return None
    if (kind is int and isinstance(value, bool)) or not isinstance(value, kind):
        raise DataError(f"expected {kind.__name__}, got {value!r}", path=path, line=line, field=key)
    return value


def _parse_line(raw: bytes, path: Path, line: int) -> Response:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 ({e.reason} at byte {e.start})", path=path, line=line) from e
    except json.JSONDecodeError as e:
        raise DataError(f"not valid JSON: {json_error_text(e)}", path=path, line=line) from e
    if not isinstance(obj, dict):
        raise DataError(f"expected a JSON object, got {type(obj).__name__}", path=path, line=line)
    unknown = sorted(set(obj) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        allowed = ", ".join((*REQUIRED_KEYS, *OPTIONAL_KEYS))
        raise DataError(
            f"unknown key(s) {', '.join(unknown)}; allowed: {allowed}", path=path, line=line, field=unknown[0]
        )
    for key in REQUIRED_KEYS:
        if key not in obj:
            raise DataError("missing field", path=path, line=line, field=key)
    world = _field(obj, "world", str, path, line, "open")
    if world not in WORLDS:
        raise DataError(
            f"unknown world {world!r}; allowed: {', '.join(WORLDS)}", path=path, line=line, field="world"
        )
    mode = _field(obj, "mode", str, path, line, NAMED)
    if mode not in DISEASE_MODES:
        raise DataError(
            f"unknown mode {mode!r}; allowed: {', '.join(DISEASE_MODES)}", path=path, line=line, field="mode"
        )
    return Response(
        query_file=_field(obj, "query_file", str, path, line),
        index=_field(obj, "index", int, path, line),
        response=_field(obj, "response", str, path, line),
        world=world,
        mode=mode,
        run=_field(obj, "run", int, path, line, 0),
        finish_reason=_field(obj, "finish_reason", str, path, line, nullable=True),
        line=line,
        explicit=frozenset(k for k in OPTIONAL_KEYS if k in obj),
    )


def read_responses(path: str | Path) -> list[Response]:
    """Read and check a responses JSONL file (blank lines are skipped).

    Raises:
        DataError: Naming the file, the 1-based line and the field of the first bad row.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise DataError("responses file not found", path=path) from e
    rows = [_parse_line(raw, path, i) for i, raw in enumerate(data.split(b"\n"), start=1) if raw.strip()]
    if not rows:
        raise DataError("no responses: the file is empty", path=path)
    return rows


class _LazyMoas:
    """A MoA lookup that loads DrugMechDB on first use: only YES answers to positives need it."""

    def __init__(self, factory: Callable[[], MoaLookup]) -> None:
        self.factory = factory
        self._moas: MoaLookup | None = None

    def __getitem__(self, moa_id: str, /) -> MoA:
        if self._moas is None:
            self._moas = self.factory()
        return self._moas[moa_id]


def score_responses(
    responses: list[Response],
    *,
    path: str | Path,
    parser: str = ROBUST,
    release_dir: str | Path | None = None,
    moas_factory: Callable[[], MoaLookup] | None = None,
    matcher: str = "tfidf",
) -> list[ScoredRow]:
    """Score every response against its released sample.

    Args:
        responses: From `read_responses`.
        path: The responses file (named in errors).
        parser: ``robust`` or ``strict_original``.
        release_dir: Folder of the released query files (default: the staged release).
        moas_factory: Loads DrugMechDB; called at most once, when the first YES answer to a positive
            needs its reference MoA. Without it such an answer is an error.
        matcher: The node-name matcher of the graph scores, ``tfidf`` (the original) or ``rapidfuzz``.
    """
    files: dict[str, QueryFile] = {}
    base = Path(path).parent
    seen: dict[tuple[str, int, str, str, int], int] = {}
    moas = _LazyMoas(moas_factory) if moas_factory is not None else None
    rows = []
    for r in responses:
        try:
            if r.query_file not in files:
                files[r.query_file] = resolve_query_file(r.query_file, base=base, release_dir=release_dir)
        except DataError as e:
            raise DataError(str(e), path=path, line=r.line, field="query_file") from e
        qfile = files[r.query_file]
        if not 0 <= r.index < len(qfile.queries):
            raise DataError(
                f"index {r.index} is out of range for {qfile.name} ({len(qfile.queries)} rows)",
                path=path,
                line=r.line,
                field="index",
            )
        key = (qfile.name, r.index, r.world, r.mode, r.run)
        if key in seen:
            raise DataError(
                f"duplicate response for {qfile.name}[{r.index}] (first on line {seen[key]})",
                path=path,
                line=r.line,
                field="index",
            )
        seen[key] = r.line
        query = qfile.queries[r.index]
        complete = r.finish_reason in (None, "stop")
        if not complete:
            score = incomplete_score(query.query_type)
        else:
            try:
                score = score_answer(
                    query, r.response, parser=parser, mode=r.mode, moas=moas, matcher=matcher
                )
            except DataError as e:  # e.g. the reference MoA of a positive is missing from DrugMechDB
                raise DataError(f"{qfile.name}[{r.index}]: {e}", path=path, line=r.line) from e
        rows.append(ScoredRow(r, query.query_type, query.is_negative_sample, qfile.link, score, query))
    return rows
