"""`biorab replay`: send a run's instances through a live endpoint and compare with the rows on disk.

For each cell of the run (a dataset slice under a retrieval setting) the served RAL is the one whose name
is the cell's label (`serve_config_of` writes such a serve config), else the one serving the same dataset
and retrieval setting (``GET /v1/models``). Each instance goes to ``POST /v1/ral`` through the official
``openai`` client, one at a time, and four things are compared with the row the run recorded:

- evidence: the retrieved document ids, in order;
- prompt: the rendered prompt text;
- answer: the generated text;
- verdict: the parsed prediction (label and whether it parsed).

Only the rows the run scored are replayed (the cell's ``predictions/<cell_id>.parquet``: one row per
instance, not the failed attempts kept in the cell's history); a cell the run has not scored is skipped
with a note.

Each difference gets a cause per field, from what the endpoint says about the RAL (its ``/v1/models``
entry), and only a cause that can change that field:

- ``config``: the served RAL's dataset, retrieval setting, sampling or parser differs from the cell's
  (any field);
- evidence and prompt, same config: ``unexplained`` (retrieval and rendering do not depend on the engine,
  the weights or the batch);
- answer and verdict, when the prompt differs too: ``prompt`` (an answer to another prompt; the prompt's
  own difference carries its cause);
- ``engine``: another backend (e.g. vLLM serving what transformers evaluated);
- ``adapter version``: the same engine, but the served model digest (base weights + adapter) gives another
  generation key for the row's prompt than the row's own (e.g. ``models:/...@best`` moved);
- ``unexplained``: sampled decoding (temperature > 0: two draws may differ whatever the batch), or a
  verdict that differs while the answer text is the same (same parser, same text);
- ``batch composition``: greedy decoding, same config, engine and weights (the generation key is the
  row's), so the answer differs only because the run generated it in a batch of ``gen_batch_size``
  padded prompts and the server in another batch (greedy decoding on CPU is not batch-invariant).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biorab.common.errors import ConfigError

FIELDS = ("evidence", "prompt", "answer", "verdict")
#: Every cause a difference may get (see the module docstring).
CAUSES = ("config", "unexplained", "prompt", "engine", "adapter version", "batch composition")


@dataclass(frozen=True)
class Difference:
    cell: str
    id: str
    field: str
    cause: str
    run: str
    served: str


@dataclass
class CellReplay:
    """One cell's replay: the served RAL it went to (``None``: none serves it), rows compared, agreements
    per field and the differences."""

    cell: str
    model: str | None
    n: int = 0
    agree: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIELDS, 0))
    differences: list[Difference] = field(default_factory=list)
    note: str | None = None


def load_run(run_dir: Path) -> Any:
    """The run's experiment config (``config.yaml`` of the run dir)."""
    from biorab.common.config_loading import load_config
    from biorab.experiment import ExperimentConfig

    path = run_dir / "config.yaml"
    if not path.is_file():
        raise ConfigError("not a run dir (no config.yaml)", path=run_dir)
    return load_config(ExperimentConfig, path)


def serve_config_of(run_dir: Path, *, cells: Sequence[str] = ()) -> dict[str, Any]:
    """A serve config (as a mapping) that serves each cell of the run as a RAL named by its label: the
    run's backend, sampling and parser, each cell's dataset and retrieval setting."""
    config = load_run(run_dir)
    chosen = _cells(config, cells)
    first = chosen[0]
    return {"name": config.name.replace(" ", "-"), "dataset": first.dataset.name,
            "data_dir": config.data_dir, "seed": config.seed,
            "backend": config.backend.model_dump(mode="json"),
            "sampling": config.sampling.model_dump(mode="json"), "parser": config.parser,
            "rals": [{"name": c.label, "dataset": c.dataset.name,
                      "retrieval": c.retrieval.model_dump(mode="json")} for c in chosen]}


def _cells(config: Any, names: Sequence[str]) -> list[Any]:
    cells = config.cells()
    if not names:
        return list(cells)
    known = {c.label: c for c in cells} | {c.cell_id: c for c in cells}
    missing = [n for n in names if n not in known]
    if missing:
        raise ConfigError(f"--cells: {missing} not in the run; its cells: {[c.label for c in cells]}")
    return [known[n] for n in names]


def scored_rows(run_dir: Path, cell_id: str) -> list[dict[str, Any]] | None:
    """The rows the run scored for a cell, in slice order (``predictions/<cell_id>.parquet``, written by
    the scoring: one row per instance, failed attempts of the history left out); ``None`` when the run
    has not scored the cell."""
    import pyarrow.parquet as pq

    from biorab.ral.specs.rows import from_table

    path = run_dir / "predictions" / f"{cell_id}.parquet"
    return from_table(pq.read_table(path)) if path.is_file() else None


def replay(run_dir: Path, client: Any, *, cells: Sequence[str] = ()) -> list[CellReplay]:
    """Replay the run's cells (all, or those named by label or id) through `client` (an ``openai.OpenAI``
    pointed at the endpoint's ``/v1``): the rows the run scored (`scored_rows`)."""
    config = load_run(run_dir)
    served = {m.id: dict(m.model_extra["biorab"]) for m in client.models.list().data}
    out = []
    for cell in _cells(config, cells):
        model = _served_model(cell, served)
        result = CellReplay(cell.label, model)
        out.append(result)
        if model is None:
            result.note = f"no served RAL is this cell's (served: {sorted(served)})"
            continue
        rows = scored_rows(run_dir, cell.cell_id)
        if rows is None:
            result.note = "the run has not scored this cell (no predictions file): nothing to replay"
            continue
        for row in rows:
            got = client.post("/ral", cast_to=object, body={
                "model": model, "input": row["text"], "fields": json.loads(row["fields"] or "{}"),
                "id": row["id"]})
            _compare(result, config, cell, row, got, served[model])
    return out


def _served_model(cell: Any, served: dict[str, dict[str, Any]]) -> str | None:
    if cell.label in served:
        return str(cell.label)
    want = cell.retrieval.model_dump(mode="json")
    for name, info in served.items():
        if info.get("dataset") == cell.dataset.name and info.get("retrieval") == want:
            return name
    return None


def _compare(result: CellReplay, config: Any, cell: Any, row: dict[str, Any], got: dict[str, Any],
             info: dict[str, Any]) -> None:
    run_values = {
        "evidence": [h["doc_id"] for h in json.loads(row["hits"] or "[]")],
        "prompt": row["prompt"],
        "answer": row["gen_text"],
        "verdict": [row["pred_label"], bool(row["pred_ok"])],
    }
    served_values = {
        "evidence": [e["id"] for e in got["evidence"]],
        "prompt": got["prompt"],
        "answer": got["generation"]["text"],
        "verdict": [got["label"], bool(got["prediction"]["ok"])],
    }
    result.n += 1
    differs = {name: run_values[name] != served_values[name] for name in FIELDS}
    for name in FIELDS:
        if not differs[name]:
            result.agree[name] += 1
            continue
        cause = difference_cause(config, cell, row, info, name, prompt_differs=differs["prompt"],
                                 answer_differs=differs["answer"])
        result.differences.append(Difference(cell.label, row["id"], name, cause,
                                             _short(run_values[name]), _short(served_values[name])))


def difference_cause(config: Any, cell: Any, row: dict[str, Any], info: dict[str, Any], field: str = "answer",
                     *, prompt_differs: bool = False, answer_differs: bool = True) -> str:
    """Why the served `field` differs from the row's (one of `CAUSES`; see the module docstring)."""
    from biorab.caches import generation_key
    from biorab.common.records import OutputConstraint, Prompt
    from biorab.generation.base import SamplingParams

    if (info.get("dataset") != cell.dataset.name
            or info.get("retrieval") != cell.retrieval.model_dump(mode="json")
            or info.get("sampling") != config.sampling.model_dump(mode="json")
            or info.get("parser") != config.parser):
        return "config"
    if field in ("evidence", "prompt"):
        return "unexplained"
    if prompt_differs:
        return "prompt"
    if info.get("backend") != config.backend.name:
        return "engine"
    constraint = OutputConstraint.from_json(row["constraint"]) if row.get("constraint") else None
    prompt = Prompt(row["id"], row["prompt"], tuple(json.loads(row["stop"] or "[]")), constraint)
    key = generation_key(str(info.get("model_digest")), prompt, SamplingParams.model_validate(
        info["sampling"]))
    if key != row["gen_key"]:
        return "adapter version"
    if field == "verdict" and not answer_differs:
        return "unexplained"
    if not config.sampling.greedy:
        return "unexplained"
    return "batch composition"


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def report(results: Sequence[CellReplay]) -> str:
    """Agreement rates per cell and field, then each difference with its cause."""
    lines = [f"{'cell':<48} {'served as':<48} {'n':>4}  " + "  ".join(f"{f:>8}" for f in FIELDS)]
    for r in results:
        if r.model is None:
            lines.append(f"{r.cell:<48} {'-':<48} {0:>4}  {r.note}")
            continue
        rates = "  ".join(f"{r.agree[f] / r.n:>8.1%}" if r.n else f"{'-':>8}" for f in FIELDS)
        lines.append(f"{r.cell:<48} {r.model:<48} {r.n:>4}  {rates}")
    total = sum(r.n for r in results)
    if total:
        rates = "  ".join(f"{sum(r.agree[f] for r in results) / total:>8.1%}" for f in FIELDS)
        lines.append(f"{'all':<48} {'':<48} {total:>4}  {rates}")
    diffs = [d for r in results for d in r.differences]
    causes: dict[str, int] = {}
    for d in diffs:
        causes[d.cause] = causes.get(d.cause, 0) + 1
    lines.append(f"{len(diffs)} difference(s)" + (f" by cause: {causes}" if causes else ""))
    for d in diffs:
        lines.append(f"  {d.cell} {d.id} {d.field} [{d.cause}]: run {d.run!r} | served {d.served!r}")
    return "\n".join(lines)
