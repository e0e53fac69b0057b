"""`biorab explore`'s builder on hand-made row shards: the files it writes, the chunks, each row's filter
code, the attribution it carries (or its absence), and the errors on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biorab.common.errors import DataError
from biorab.common.records import Example
from biorab.explorer import write_explorer
from biorab.explorer.attribution_file import ATTRIBUTION_FILE, COLUMNS
from biorab.explorer.entries import (
    ATTRIBUTED,
    COPIED,
    HAS_CORRUPTED,
    MISLED,
    PARSE_FAILED,
    PROBE_SHIFT,
    PROBE_UNPARSED,
    VERDICT_SHIFT,
)
from biorab.ral.specs.rows import example_row
from biorab.runner.store.shards import write_shards

NONE, CF, QA = "ade_corpus_v2-test__none__aa", "ade_corpus_v2-test__cf__bb", "medmcqa-test__none__cc"


def _row(cell: str, dataset: str, i: int, answer: str | None, **extra: Any) -> dict[str, Any]:
    ex = Example(id=f"{dataset}/test/{i}", task="classification", dataset=dataset, split="test",
                 text=f"text {i} of {dataset}", label="1")
    row = example_row(cell, i, ex)
    row.update(prompt=f"prompt {i}", gen_text=answer or "???", gen_error=None, pred_label=answer,
               pred_ok=answer is not None, written_at=1.0, **extra)
    return row


def _hits(i: int) -> str:
    return json.dumps([{"doc_id": f"train/{i}", "score": 2.5, "rank": 0, "key": f"key {i}", "value": "0",
                        "dataset": "ade_corpus_v2"}])


def _run(tmp_path: Path, *, attribution: list[dict[str, Any]] | None) -> Path:
    run = tmp_path / "run"
    cells = run / "cells"
    rows = [_row(NONE, "ade_corpus_v2", i, "1" if i % 2 else None) for i in range(5)]
    rows += [_row(CF, "ade_corpus_v2", i, "0", hits=_hits(i)) for i in range(5)]
    rows += [_row(QA, "medmcqa", i, "(A)", probe_prompt="probe?", probe_judgement=[None, "True", "False"][i])
             for i in range(3)]
    write_shards(rows, cells, "a1")
    specs = ((NONE, "ade_corpus_v2", "none", 5), (CF, "ade_corpus_v2", "counterfactual", 5),
             (QA, "medmcqa", "none", 3))
    summary = [{"cell_id": cid, "cell": cid.rsplit("__", 1)[0], "dataset": ds, "split": "test",
                "task": "classification", "testbed": tb, "retriever": None if tb == "none" else "bm25",
                "n": n} for cid, ds, tb, n in specs]
    summary.append({"cell_id": "drugmech-x", "cell": "drugmech-x", "task": "drugmech", "n": 2})
    (run / "summary.json").write_text(json.dumps({"cells": summary}), encoding="utf-8")
    if attribution is not None:
        schema = pa.schema(list(COLUMNS.items()))
        pq.write_table(pa.Table.from_pylist(attribution, schema=schema), cells / CF / ATTRIBUTION_FILE)
    return run


def _attribution(i: int) -> dict[str, Any]:
    tags = [{"doc_id": f"train/{i}", "corrupted": i < 3, "original_label": "1", "corrupted_label": "0",
             "how": "label", "leaked": False, "diverse": False, "source": "ade_corpus_v2",
             "unlabeled": False}]
    return {"id": f"ade_corpus_v2/test/{i}", "correct": False, "parse_failed": False,
            "has_corrupted": i < 3, "followed_corruption": i < 3, "copied_evidence": True,
            "copied_corrupted": i < 3,
            "leaked_evidence": False, "flip": "hurt" if i % 2 else "unchanged", "twin_cell_id": NONE,
            "error_types": None, "hit_tags": json.dumps(tags)}


def _payload(path: Path) -> list[Any]:
    """The arguments of the one ``BIORAB_EXPLORER.<fn>(...)`` call a data file makes."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith("BIORAB_EXPLORER.") and text.endswith(");\n")
    return list(json.loads("[" + text[text.index("(") + 1:-3] + "]"))


def test_files_chunks_codes_and_attribution(tmp_path: Path) -> None:
    run = _run(tmp_path, attribution=[_attribution(i) for i in range(5)])
    build = write_explorer(run, detail_bytes=1, index_rows=4)
    out = run / "explorer"
    assert build.index_html == out / "index.html"
    counted = (build.cells, build.rows, build.instances, build.attributed_cells, build.skipped_cells)
    assert counted == (3, 13, 8, 1, 1)
    # one instance per detail chunk (1 byte each); index chunks close before passing 4 rows (2 per ade
    # instance)
    assert (build.detail_chunks, build.index_chunks) == (8, 4)
    assert sorted(p.name for p in out.iterdir()) == ["data", "explorer-stats.js", "explorer.css",
                                                     "explorer.js", "index.html"]
    (manifest,) = _payload(out / "data" / "manifest.js")
    assert [(c["cell_id"], c["attributed"], c["twin"]) for c in manifest["cells"]] == [
        (NONE, False, None), (CF, True, 0), (QA, False, None)]
    assert manifest["datasets"] == ["ade_corpus_v2", "medmcqa"]
    assert (manifest["rows"], manifest["instances"]) == (13, 8)
    assert manifest["probe_labels"] == ["True", "False"]

    codes: dict[tuple[str, int], int] = {}
    listed = []
    for k in range(build.index_chunks):
        number, part = _payload(out / "data" / f"index-{k:05d}.js")
        assert number == k
        listed += part["instances"]
        triples = part["rows"]
        for j in range(0, len(triples), 3):
            codes[(listed[triples[j]][1], triples[j + 1])] = triples[j + 2]
    assert [entry[1] for entry in listed] == [f"ade_corpus_v2/test/{i}" for i in range(5)] + [
        f"medmcqa/test/{i}" for i in range(3)]
    assert [entry[3] for entry in listed] == list(range(8))  # each in its own detail chunk
    assert listed[0][:3] == [0, "ade_corpus_v2/test/0", "text 0 of ade_corpus_v2"]
    # no attribution: only the parse failure (from the row) and nothing else
    assert codes[("ade_corpus_v2/test/0", 0)] == PARSE_FAILED
    assert codes[("ade_corpus_v2/test/1", 0)] == 0
    # attribution: misled, corrupted evidence, copied, verdict wrong (2), flip hurt (2) or unchanged (3)
    misled = ATTRIBUTED | MISLED | HAS_CORRUPTED | COPIED
    assert codes[("ade_corpus_v2/test/1", 1)] == misled | 2 << VERDICT_SHIFT | 2 << 10
    assert codes[("ade_corpus_v2/test/4", 1)] == ATTRIBUTED | COPIED | 2 << VERDICT_SHIFT | 3 << 10
    # the probe's answer: unparsable, True, False
    assert [codes[(f"medmcqa/test/{i}", 2)] >> PROBE_SHIFT for i in range(3)] == [PROBE_UNPARSED, 1, 2]

    number, (detail,) = _payload(out / "data" / "detail-00001.js")
    assert number == 1
    assert (detail["instance"], detail["id"], detail["gold"]) == (1, "ade_corpus_v2/test/1", "1")
    by_cell = {r["cell"]: r for r in detail["rows"]}
    assert by_cell[0]["hits"] == [] and by_cell[0]["attribution"] is None and by_cell[0]["answer"] == "1"
    hit = by_cell[1]["hits"][0]
    assert (hit["doc_id"], hit["value"], hit["tags"]["corrupted"], hit["tags"]["original_label"]) == (
        "train/1", "0", True, "1")
    assert by_cell[1]["attribution"]["flip"] == "hurt" and "hit_tags" not in by_cell[1]["attribution"]


def test_without_attribution_and_rebuilt_in_place(tmp_path: Path) -> None:
    run = _run(tmp_path, attribution=None)
    first = write_explorer(run, detail_bytes=1)
    assert (first.attributed_cells, first.detail_chunks, first.index_chunks) == (0, 8, 1)
    again = write_explorer(run)  # the default sizes: everything in one chunk each; the old chunks are gone
    assert (again.detail_chunks, again.index_chunks) == (1, 1)
    assert sorted(p.name for p in (run / "explorer" / "data").iterdir()) == [
        "detail-00000.js", "index-00000.js", "manifest.js"]
    assert not [p for p in run.iterdir() if p.name.startswith(".explorer")]


def test_a_sweep_folder_reads_each_run(tmp_path: Path) -> None:
    for model in ("m1", "m2"):
        _run(tmp_path / model, attribution=None).rename(tmp_path / "sweep" / model if (
            tmp_path / "sweep").is_dir() else _mkdir(tmp_path / "sweep") / model)
    build = write_explorer(tmp_path / "sweep")
    (manifest,) = _payload(build.index_html.parent / "data" / "manifest.js")
    assert (build.cells, build.rows, build.instances) == (6, 26, 8)  # the same instances, twice the cells
    assert manifest["runs"] == ["m1", "m2"]


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def test_bad_input_names_the_file_and_field(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="neither a run"):
        write_explorer(_mkdir(tmp_path / "empty"))
    run = _run(tmp_path, attribution=None)
    pq.write_table(pa.table({"id": ["x"], "correct": [True]}), run / "cells" / CF / ATTRIBUTION_FILE)
    with pytest.raises(DataError, match=rf"{ATTRIBUTION_FILE}.*'parse_failed'.*missing column"):
        write_explorer(run)
    rows = [_attribution(0) | {"flip": "better"}]
    pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(list(COLUMNS.items()))),
                   run / "cells" / CF / ATTRIBUTION_FILE)
    with pytest.raises(DataError, match=r"line 1.*'flip'.*'better' is none of helped, hurt, unchanged"):
        write_explorer(run)
    assert not (run / "explorer").exists()  # a failed build leaves nothing half-written


def test_cli_prints_the_page(tmp_path: Path) -> None:
    from biorab.cli.main import app

    run = _run(tmp_path, attribution=None)
    result = CliRunner().invoke(app, ["explore", str(run), "--no-track"])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == str(run / "explorer" / "index.html")


def test_the_scored_predictions_win_over_the_shards(tmp_path: Path) -> None:
    """A cell's rows are those the run scored (its predictions file, found by name under the run folder
    even when summary.json names another place); the shards may hold rows of an older slice."""
    from biorab.ral.specs.rows import to_table

    run = _run(tmp_path, attribution=None)
    summary = json.loads((run / "summary.json").read_text())
    summary["cells"][0]["predictions"] = f"/moved/elsewhere/predictions/{NONE}.parquet"
    (run / "summary.json").write_text(json.dumps(summary))
    scored = [_row(NONE, "ade_corpus_v2", i, "0") for i in range(2)]  # 2 of the shards' 5, answers changed
    (run / "predictions").mkdir()
    pq.write_table(to_table(scored), run / "predictions" / f"{NONE}.parquet")
    build = write_explorer(run)
    assert (build.rows, build.instances) == (10, 8)  # 2 + 5 + 3 rows; the instances of the other cells
    text = (run / "explorer" / "data" / "detail-00000.js").read_text()
    assert text.count('"answer": "0"') == 2 + 5  # the scored rows' answer, and the counterfactual cell's
    (run / "predictions" / f"{NONE}.parquet").write_bytes(b"not parquet")
    with pytest.raises(DataError, match=rf"{NONE}.parquet.*unreadable predictions"):
        write_explorer(run)
