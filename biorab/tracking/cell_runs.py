"""What a cell's MLflow child run holds: its own setting (params and tags, so the compare view's "diff only"
shows where cells differ), its metrics with CI bounds grouped apart, its dataset inputs, its predictions as a
table and its corruption ledger."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from biorab.experiment import ExperimentConfig
from biorab.file_digests import file_digest
from biorab.ral.specs.cell_records import CellPlan, CellResult
from biorab.tracking.names import mlflow_name
from biorab.tracking.session import TABLE_ROWS, CellEntry


def cell_key(parent_key: str, plan: CellPlan) -> str:
    """Stable across reruns and resumes: the cell id digests everything that determines its rows."""
    return f"{parent_key}/{plan.cell_id}"


def cell_setting(config: ExperimentConfig, plan: CellPlan, *, model: str | None = None,
                 method: str = "none") -> dict[str, str]:
    """The cell's own setting: model, then what the cell is (a dataset slice: dataset, testbed, rate,
    retriever, k, template, method...; another cell: its source's description, `CellPlan.columns`)."""
    backend = config.backend
    out = {"model": model or str(backend.params.get("model", backend.name)), "backend": backend.name,
           "model_id": str(backend.params.get("model", ""))}
    if plan.info is not None:
        described = {"task": plan.task, "seed": str(config.seed), "parser": plan.parser, **plan.columns()}
        return {**out, **{k: "" if v is None else str(v) for k, v in described.items()}}
    dataset, r = plan.dataset_setting()
    out.update(dataset=dataset, split=str(plan.split), task=plan.task, seed=str(config.seed),
               parser=plan.parser, method=method)
    out.update(testbed=r.testbed, rate="" if r.rate is None else f"{r.rate:g}", template=r.template,
               retriever=r.retriever if r.retrieves else "none")
    if r.retrieves:
        out.update(k=str(r.k), keep_ties=str(r.keep_ties), dedupe=str(r.dedupe),
                   encoder=str(r.params.get("encoder", "")), awareness_probe=str(r.probes))
        if r.exclude_test_duplicates:  # only when set: existing cells keep their params
            out["exclude_test_duplicates"] = "True"
    return out


def cell_entry(config: ExperimentConfig, plan: CellPlan, parent_key: str, *, model: str | None = None,
               method: str = "none", model_digest: str = "", run_name: str = "") -> CellEntry:
    setting = cell_setting(config, plan, model=model, method=method)
    # mlflow.runType "evaluation": what a cell is; MLflow's runs table also opens the parent of such
    # children, so the cells show without a click (biorab.tracking.ui_link).
    tags = {**setting, "cell_id": plan.cell_id, "model_digest": model_digest, "biorab.run_name": run_name
            or config.name, "corpus": _corpus(plan), "mlflow.runType": "evaluation"}
    return CellEntry(cell_key(parent_key, plan), f"{setting['model']}/{plan.label}", setting, tags,
                     dataset_inputs(config, plan))


def _corpus(plan: CellPlan) -> str:
    r = plan.retrieval
    if r is None:
        return "none"
    return r.testbed + (f"@{r.rate:g}" if r.rate is not None else "")


def cell_metrics(result: CellResult) -> dict[str, float]:
    """``{"f1": .., "ci_low/f1": .., "ci_high/f1": .., "n": ..}``: CI bounds under their own prefixes, so
    the UI groups them apart and shows each metric as one chart, not three."""
    out: dict[str, float] = {"n": float(result.n), "parse_failures": float(result.parse_failures),
                             "generation_failures": float(result.generation_failures)}
    if "n_incomplete" in result.extra:
        out["n_incomplete"] = float(result.extra["n_incomplete"])
    usage = result.extra.get("usage") or {}
    for name in ("prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd"):
        if usage.get(name) is not None:
            out[name] = float(usage[name])
    if usage.get("finish_reasons"):  # replies not ended by `stop` (cut at the length limit, failed, ...)
        out["not_stopped"] = float(sum(n for k, n in usage["finish_reasons"].items() if k != "stop"))
    leak = result.extra.get("leak_share") or {}
    if leak.get("value") is not None:  # a retrieving cell: the share of queries that retrieved their own text
        out["leak_share"] = float(leak["value"])
    if result.incomplete:  # metrics over a partial cell (failed rows) are not measurements: kept out
        return out
    for name, value in result.metrics.items():
        key = mlflow_name(name)
        for prefix, field_ in (("", "value"), ("ci_low/", "ci_low"), ("ci_high/", "ci_high")):
            number = value.get(field_)
            if number is not None:
                out[prefix + key] = float(number)
    return out


def ci_tags(result: CellResult) -> dict[str, str]:
    """``{"ci.f1": "0.830 [0.780, 0.880]"}``: value and interval readable in the runs table; an incomplete
    cell gets ``{"incomplete": "true"}`` instead. A retrieving cell's ``attribution.baseline`` names its
    no-retrieval twin, or says ``no baseline``: its attribution rates are then agreement, not influence."""
    if result.incomplete:
        return {"incomplete": "true"}
    out = {"incomplete": "false"}  # overwrites the tag of an earlier, incomplete attempt of the cell
    baseline = (result.extra.get("attribution") or {}).get("baseline")
    if baseline is not None:
        out["attribution.baseline"] = str(baseline)
    for name, v in result.metrics.items():
        if v.get("value") is not None and v.get("ci_low") is not None and v.get("ci_high") is not None:
            out[f"ci.{mlflow_name(name)}"] = f"{v['value']:.3f} [{v['ci_low']:.3f}, {v['ci_high']:.3f}]"
    return out


def predictions_table(path: Path) -> dict[str, list[Any]]:
    """The first `TABLE_ROWS` instances as columns the UI previews: id, input, gold, prediction, parse
    status (``ok``, ``unparsed``, ``failed``: the generation failed), retrieved ids, output, error."""
    import pyarrow.parquet as pq

    cols = ["id", "text", "label", "pred_label", "pred_ok", "hits", "gen_text", "gen_error"]
    table = pq.read_table(path, columns=cols).slice(0, TABLE_ROWS).to_pylist()
    return {"id": [r["id"] for r in table], "input": [(r["text"] or "")[:300] for r in table],
            "gold": [r["label"] for r in table], "prediction": [r["pred_label"] for r in table],
            "parse_status": [_parse_status(r) for r in table],
            "retrieved_ids": [" ".join(h["doc_id"] for h in json.loads(r["hits"] or "[]")) for r in table],
            "output": [(r["gen_text"] or "")[:300] for r in table], "error": [r["gen_error"] for r in table]}


def _parse_status(row: dict[str, Any]) -> str:
    if row["gen_error"]:
        return "failed"
    return "ok" if row["pred_ok"] else "unparsed"


def write_ledger(config: ExperimentConfig, plan: CellPlan, out_dir: Path) -> Path | None:
    """The corruption ledger of the cell's corpus (which items were corrupted, and how), as JSONL; ``None``
    for cells without retrieval. The corpus the run's retriever indexed in this process (built once per
    process, `biorab.ral.parts.testbeds.testbed_corpus`), or rebuilt: corpora are deterministic."""
    from biorab.ral.parts.testbeds import testbed_corpus

    if not plan.retrieves:
        return None
    dataset, r = plan.dataset_setting()
    rate = "" if r.rate is None else f"-{r.rate:g}"
    path = out_dir / "ledgers" / f"{dataset}-{r.testbed}{rate}-seed{plan.seed}.jsonl"
    if not path.is_file():
        _corpus_, ledger = testbed_corpus(r.testbed, dataset, rate=r.rate, seed=plan.seed,
                                          data_dir=plan.data_dir)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(ledger.to_jsonl())
    return path


def dataset_inputs(config: ExperimentConfig, plan: CellPlan) -> list[tuple[str, str, str]]:
    """(name, digest, uri) of the files a cell reads: its dataset's staged files (digest of contents)."""
    if plan.dataset is None:  # the source reads its own files (no dataset folder)
        return []
    from biorab.common.paths import biorab_data_dir

    folder = biorab_data_dir(config.data_dir) / plan.dataset
    if not folder.is_dir():
        return []
    return [(f"{plan.dataset}-{plan.split}", folder_digest(folder), folder.resolve().as_uri())]


def folder_digest(folder: Path) -> str:
    """sha256 over the (relative name, content) of every file of a dataset folder (files unchanged since
    this process read them are not read again, `biorab.file_digests`)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(json.dumps(file.relative_to(folder).as_posix()).encode())
        digest.update(bytes.fromhex(file_digest(file)))
    return digest.hexdigest()
