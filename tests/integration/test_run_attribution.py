"""Evidence attribution on a counterfactual run with the fake backend (issues 32 and 39): every rate of each
retrieving cell (in the result, summary.json and report.md) equals the one recomputed here from the rows'
hits, the twin's rows and the ledger files; the copying fake (k = 1) is misled on every instance whose
evidence could mislead (misled_rate exactly 1), the evidence-blind gold fake never and with no excess over
its twin, and the fake that copies only when its prior is weak separates the prior bins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from biorab.attribution.cell_attribution import ATTRIBUTION_FILE, ATTRIBUTION_SCHEMA, read_attribution
from biorab.corpora import build_corpus, write_corpus
from biorab.runner import run_experiment
from tests.support.attribution_runs import COPY_TOP, RATE, attribution_config, gold_answers


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def _ledger(tmp_path: Path, data_dir: Path, dataset: str) -> dict[str, dict[str, Any]]:
    """The testbed's ledger as the files on disk hold it (``ledger.jsonl``), read back line by line."""
    folder = write_corpus(*build_corpus("counterfactual", dataset, rate=RATE, seed=0, data_dir=data_dir),
                          tmp_path / "ledgers" / dataset)
    lines = (folder / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["item_id"]: row for row in map(json.loads, lines)}


def _items(task: str, label: str | None) -> set[str]:
    """Answer items, written out here: one label, or each triple lower-cased with its spaces collapsed."""
    if not label:
        return set()
    if task != "triple_extraction":
        return {label}
    return {"|".join(" ".join(p.lower().split()) for p in line.split("|")) for line in label.split("\n")}


def _flags(row: dict[str, Any], answer_row: dict[str, Any],
           ledger: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`answer_row`'s answer (the cell's own row, or its twin's) against `row`'s hits, written out here from
    the ledger file: a hit is corrupted when the ledger lists it and it carries another label than the
    original; misleading when its changed items are not all in the gold."""
    task, gold = row["task"], _items(row["task"], row["label"])
    answer = _items(task, answer_row["pred_label"]) if answer_row["pred_ok"] else set()
    hits = json.loads(row["hits"] or "[]")
    bad = [h["doc_id"] in ledger and h["value"] is not None and h["value"] != ledger[h["doc_id"]]["original"]
           for h in hits]
    changed = [(_items(task, h["value"]) - _items(task, ledger[h["doc_id"]]["original"])) - gold
               if b else set() for h, b in zip(hits, bad, strict=True)]
    misleading = [bool(c) for c in changed]
    copied = [bool(answer) and _items(task, h["value"]) == answer for h in hits if h["value"] is not None]
    copied_bad = [bool(answer) and _items(task, h["value"]) == answer and b
                  for h, b in zip(hits, bad, strict=True)]
    copied_misleading = [c and m for c, m in zip(copied_bad, misleading, strict=True)]
    return {"corrupted": any(bad), "misleading": any(misleading),
            "rank": misleading.index(True) + 1 if any(misleading) else None,
            "followed": any(answer & c for c in changed), "right": bool(answer) and answer == gold,
            "copied": any(copied), "copied_corrupted": any(copied_bad),
            "copied_misleading": any(copied_misleading),
            "clean": any(h["value"] is not None for h in hits) and not any(bad),
            "labeled": any(h["value"] is not None for h in hits), "answer": answer,
            "top_misleading": bool(misleading) and misleading[0]}


def _share(pairs: list[tuple[bool, bool]]) -> float | None:
    below = sum(d for _, d in pairs)
    return sum(n and d for n, d in pairs) / below if below else None


def expected_rates(rows: list[dict[str, Any]], twin_rows: dict[str, dict[str, Any]],
                   ledger: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Every attribution rate of a retrieving cell recomputed from its rows, its twin's rows and the ledger
    file (docs/metrics.md's table, numerator over denominator, written out independently of the code)."""
    own = [_flags(r, r, ledger) for r in rows]
    twin = [_flags(r, twin_rows[r["id"]], ledger) for r in rows]
    both = list(zip(own, twin, strict=True))
    out: dict[str, float | None] = {
        "misled_rate": _share([(f["followed"], f["misleading"]) for f in own]),
        "resisted_rate": _share([(f["right"], f["misleading"]) for f in own]),
        "corruption_agrees_with_gold": _share([(not f["misleading"], f["corrupted"]) for f in own]),
        "misled_share": _share([(f["followed"], True) for f in own]),
        "copy_rate_clean": _share([(f["copied"], f["clean"]) for f in own]),
        "copy_rate_corrupted": _share([(f["copied_corrupted"], f["corrupted"]) for f in own]),
        "misled_rate_twin": _share([(t["followed"], f["misleading"]) for f, t in both]),
        "switched_to_evidence": _share([(f["copied"] and f["answer"] != t["answer"], f["labeled"])
                                        for f, t in both]),
        "switched_to_corruption": _share([(f["copied_misleading"] and f["answer"] != t["answer"],
                                            f["misleading"])
                                          for f, t in both]),
        "copy_rate_clean_twin": _share([(t["copied"], f["clean"]) for f, t in both]),
        "copy_rate_corrupted_twin": _share([(t["copied_corrupted"], f["corrupted"])
                                            for f, t in both]),
        "helped_rate": _share([(f["right"] and not t["right"], True) for f, t in both]),
        "hurt_rate": _share([(t["right"] and not f["right"], True) for f, t in both]),
    }
    for rate, twin_rate, excess in (("misled_rate", "misled_rate_twin", "misled_excess"),
                                    ("copy_rate_clean", "copy_rate_clean_twin", "copy_rate_clean_excess"),
                                    ("copy_rate_corrupted", "copy_rate_corrupted_twin",
                                     "copy_rate_corrupted_excess")):
        a, b = out[rate], out[twin_rate]
        out[excess] = None if a is None or b is None else a - b  # every instance is paired here
    for name, ranks in (("1", {1}), ("2", {2}), ("3_or_more", set(range(3, 100)))):
        out["misled_by_rank/" + name] = _share([(f["followed"], f["rank"] in ranks) for f in own])
    return out


def _cells(result: Any) -> dict[str, Any]:
    return {c.plan.cell_id: c for c in result.cells}


def _twin_rows(result: Any, cell: Any) -> dict[str, dict[str, Any]]:
    (twin,) = [c for c in result.cells if c.plan.dataset == cell.plan.dataset and not c.plan.retrieves]
    return {r["id"]: r for r in pq.read_table(twin.predictions_path).to_pylist()}


def _check_recomputed(result: Any, tmp_path: Path, data_dir: Path) -> dict[str, dict[str, float | None]]:
    """Every retrieving cell's rates equal the recomputation, in the cell result, summary.json and
    report.md; returns the recomputed rates by dataset."""
    summary = {c["cell_id"]: c for c in json.loads((result.run_dir / "summary.json").read_text())["cells"]}
    report = result.report_path.read_text()
    out = {}
    for cell in (c for c in result.cells if c.plan.retrieves):
        rows = pq.read_table(cell.predictions_path).to_pylist()
        ledger = _ledger(tmp_path, data_dir, cell.plan.dataset)
        expected = expected_rates(rows, _twin_rows(result, cell), ledger)
        for name, value in expected.items():
            got = cell.metrics.get(name, {}).get("value")
            assert got == (None if value is None else pytest.approx(value)), (cell.plan.cell_id, name)
            assert summary[cell.plan.cell_id]["metrics"].get(name, {}).get("value") == got
            if value is not None and "/" not in name:
                shown = f"{got:.3f} [{cell.metrics[name]['ci_low']:.3f}, {cell.metrics[name]['ci_high']:.3f}]"
                assert shown in report, name
        out[cell.plan.dataset] = expected
    return out


def test_copying_fake_misled_rate_recomputed_from_rows_and_ledger(tmp_path: Path, data_dir: Path) -> None:
    config = attribution_config(tmp_path, data_dir, COPY_TOP)
    result = run_experiment(config)
    counts = {}
    for cell in result.cells:
        dataset = cell.plan.dataset
        table = pq.read_table(result.run_dir / "cells" / cell.plan.cell_id / ATTRIBUTION_FILE)
        assert table.schema.equals(ATTRIBUTION_SCHEMA)
        attribution = {r["id"]: r for r in table.to_pylist()}
        rows = pq.read_table(cell.predictions_path).to_pylist()
        assert [r["id"] for r in rows] == list(attribution)
        if not cell.plan.retrieves:
            assert "misled_rate" not in cell.metrics
            assert {r["flip"] for r in attribution.values()} == {None}
            continue
        ledger = _ledger(tmp_path, data_dir, dataset)
        flags = [_flags(r, r, ledger) for r in rows]
        # k = 1: the copier answers its only hit, so it follows every misleading one: misled_rate exactly 1.
        assert cell.metrics["misled_rate"]["value"] == 1.0
        assert all(f["top_misleading"] == f["misleading"] for f in flags)
        assert cell.metrics["copy_rate_corrupted"]["value"] == 1.0
        assert cell.metrics["copy_rate_clean"]["value"] == 1.0
        for row, f in zip(rows, flags, strict=True):  # every hit tagged, in order, flags as recomputed
            a = attribution[row["id"]]
            tags = json.loads(a["hit_tags"])
            assert [t["doc_id"] for t in tags] == [h["doc_id"] for h in json.loads(row["hits"])]
            assert (a["followed_corruption"], a["misleading_evidence"], a["first_misleading_rank"]) == \
                (f["followed"], f["misleading"], f["rank"])
            assert a["correct"] is f["right"]  # a parse failure is wrong, not unknown
        twin = attribution[rows[0]["id"]]["twin_cell_id"]
        assert twin in _cells(result) and not _cells(result)[twin].plan.retrieves
        assert {r["flip"] for r in attribution.values()} <= {"helped", "hurt", "unchanged"}
        # The copier's twin sees no example and answers nothing parsable: its prior bins are its correctness.
        assert {r["prior_bin"] for r in attribution.values()} == {"twin_wrong"}
        extra = cell.extra["attribution"]
        counts[dataset] = (extra["with_corrupted"], extra["with_misleading"],
                           extra["corruption_agrees_with_gold"], extra["misled"], extra["helped"],
                           extra["hurt"])
        assert extra["baseline"] == twin
    # Pinned on the fixture data (12 instances per dataset, BM25 top-1 over the 0.8 counterfactual corpus).
    # Before the misleading-hit denominator these were (corrupted, misled) = (9, 7), (10, 9), (11, 11): the
    # copier follows each misleading top hit, so 7, 9 and 11 instances hold one; 2, 1 and 0 corruptions
    # carry the query's gold.
    assert counts == {"ade_corpus_v2": (9, 7, 2, 7, 3, 0), "medmcqa": (10, 9, 1, 9, 1, 0),
                      "ade": (11, 11, 0, 11, 0, 0)}
    recomputed = _check_recomputed(result, tmp_path, data_dir)
    for dataset, rates in recomputed.items():
        # The twin answers nothing: chance level 0, so the whole misled rate is excess; every copy switched.
        assert (rates["misled_rate_twin"], rates["misled_excess"]) == (0.0, 1.0), dataset
        assert rates["switched_to_evidence"] == 1.0 and rates["switched_to_corruption"] == 1.0
    report = result.report_path.read_text()
    main, attribution = report.split("## Evidence attribution")
    assert "misled" not in main  # the attribution rates have their own table, not 7 more rows per cell
    ade = "| ade-test__counterfactual-0.8-bm25-k1 | 11 / 12 | 0.000 [0.000, 0.000] | 1.000 [1.000, 1.000] |"
    assert ade in attribution
    assert "| ade_corpus_v2-test__counterfactual-0.8-bm25-k1 | 7 / 12 | 0.222 [" in attribution
    assert "Error types of triple_extraction (the paper's are §2.8, Table 7's)" in attribution
    assert "Holm p" in attribution
    summary = json.loads((result.run_dir / "summary.json").read_text())
    triples = next(c for c in summary["cells"] if c["task"] == "triple_extraction" and c["testbed"] != "none")
    assert triples["attribution"]["with_corrupted"] == 11
    assert sum(triples["attribution"]["error_types"].values()) > 0
    assert triples["metrics"]["flip_mcnemar_p"]["value"] == 1.0
    assert any(name.startswith("error_rate/") for name in triples["metrics"])

    # A resumed run (every row on disk, nothing generated) writes the same attribution from the rows alone.
    files = sorted((result.run_dir / "cells").glob(f"*/{ATTRIBUTION_FILE}"))
    before = [pq.read_table(f).to_pylist() for f in files]
    for f in files:
        f.unlink()
    again = run_experiment(config)
    assert again.stats.generated == 0 and again.total_pending == 0
    assert [pq.read_table(f).to_pylist() for f in files] == before


def test_gold_fake_is_never_misled(tmp_path: Path, data_dir: Path) -> None:
    backend = {"mode": "map", "answers": gold_answers(data_dir)}
    result = run_experiment(attribution_config(tmp_path, data_dir, backend))
    retrieving = [c for c in result.cells if c.plan.retrieves]
    assert len(retrieving) == 3
    for cell in retrieving:
        assert cell.metrics["misled_rate"]["value"] == 0.0
        assert cell.metrics["resisted_rate"]["value"] == 1.0
        # Evidence-blind: the same answer with and without evidence, so nothing is caused by it.
        assert cell.metrics["misled_excess"]["value"] == 0.0
        assert cell.metrics["switched_to_evidence"]["value"] == 0.0
        assert cell.metrics["switched_to_corruption"]["value"] == 0.0
        assert cell.metrics["copy_rate_clean_excess"]["value"] == 0.0
        assert cell.metrics["helped_rate"]["value"] == 0.0 and cell.metrics["hurt_rate"]["value"] == 0.0
        assert cell.extra["attribution"]["mcnemar"]["p_value"] == 1.0
    triples = next(c for c in retrieving if c.plan.task == "triple_extraction")
    assert set(triples.extra["attribution"]["error_types"].values()) == {0}
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert all("misled_rate" in c["metrics"] for c in summary["cells"] if c["testbed"] != "none")
    _check_recomputed(result, tmp_path, data_dir)


def test_a_fake_that_copies_only_when_unsure_separates_the_prior_bins(tmp_path: Path, data_dir: Path) -> None:
    """The third fake: its prior is the gold, held with a log-prob margin of 0.5 nats on the even-numbered
    instances and 5 on the odd ones; below 1 nat it answers its top hit instead. So by its rule, among
    instances with misleading evidence, the weak-prior bin is misled every time and the strong one never."""
    golds = gold_answers(data_dir)
    order = {ex_id: i for i, ex_id in enumerate(golds)}  # fixture order: every dataset's first 12
    margins = {ex_id: 0.5 if order[ex_id] % 2 == 0 else 5.0 for ex_id in golds}
    backend = {"mode": "copy_when_unsure", "answers": golds, "margins": margins}
    result = run_experiment(attribution_config(tmp_path, data_dir, backend, sampling={"score_labels": True}))
    recomputed = _check_recomputed(result, tmp_path, data_dir)
    for cell in (c for c in result.cells if c.plan.retrieves):
        rows = pq.read_table(cell.predictions_path).to_pylist()
        ledger = _ledger(tmp_path, data_dir, cell.plan.dataset)
        weak = [r for r in rows if margins[r["id"]] < 1 and _flags(r, r, ledger)["misleading"]]
        strong = [r for r in rows if margins[r["id"]] >= 1 and _flags(r, r, ledger)["misleading"]]
        attribution = read_attribution(result.run_dir / "cells" / cell.plan.cell_id)
        prior = cell.extra["attribution"]["prior"]
        if cell.plan.task == "triple_extraction":  # no label set to score: bins by the twin's correctness
            assert prior["signal"] == "twin correctness" and set(prior["bins"]) == {"twin_right"}
            continue
        assert prior["signal"] == "label log-prob margin"
        assert {r["id"]: r["twin_margin"] for r in attribution.values()} == pytest.approx(
            {r["id"]: margins[r["id"]] for r in rows})
        assert weak and strong, cell.plan.cell_id
        assert prior["bins"]["margin_lt_1"]["misleading"] == len(weak)
        assert prior["bins"]["margin_ge_3"]["misleading"] == len(strong)
        assert cell.metrics["misled_by_prior/margin_lt_1"]["value"] == 1.0
        assert cell.metrics["misled_by_prior/margin_ge_3"]["value"] == 0.0
        assert "misled_by_prior/margin_1_to_3" not in cell.metrics
        share = len(weak) / (len(weak) + len(strong))
        assert recomputed[cell.plan.dataset]["misled_rate"] == pytest.approx(share)


def test_position_of_the_first_misleading_hit(tmp_path: Path, data_dir: Path) -> None:
    """k = 3: the copier answers its top hit, so by its rule it is misled every time the first misleading hit
    is at rank 1, and below that only where the top hit (clean, or a corruption that agrees with the gold)
    carries the same wrong label as a lower misleading hit; switched to evidence and to corruption now
    differ, and every rate still equals the recomputation."""
    result = run_experiment(attribution_config(tmp_path, data_dir, COPY_TOP, k=3))
    recomputed = _check_recomputed(result, tmp_path, data_dir)
    lower = 0
    for cell in (c for c in result.cells if c.plan.retrieves):
        by_rank = cell.extra["attribution"]["by_rank"]
        assert cell.metrics["misled_by_rank/1"]["value"] == 1.0
        ledger = _ledger(tmp_path, data_dir, cell.plan.dataset)
        rows = pq.read_table(cell.predictions_path).to_pylist()
        for name, ranks in (("2", {2}), ("3_or_more", {3})):
            at = [r for r in rows if _flags(r, r, ledger)["rank"] in ranks]
            lower += len(at)
            misled = sum(_top_label_is_a_lower_wrong(r, ledger) for r in at)
            assert by_rank[name] == {"n": len(at), "misled": misled}
    assert lower > 0  # the fixture has misleading hits below the top
    assert any(r["switched_to_evidence"] != r["switched_to_corruption"] for r in recomputed.values())


def _top_label_is_a_lower_wrong(row: dict[str, Any], ledger: dict[str, dict[str, Any]]) -> bool:
    """The top hit's label holds a wrong item (outside the gold) of a corrupted hit below it."""
    task, hits = row["task"], json.loads(row["hits"])
    top = _items(task, hits[0]["value"]) - _items(task, row["label"])
    return any(top & (_items(task, h["value"]) - _items(task, ledger[h["doc_id"]]["original"]))
               for h in hits[1:] if h["doc_id"] in ledger and h["value"] != ledger[h["doc_id"]]["original"])


def test_a_cell_without_a_twin_says_no_baseline(tmp_path: Path, data_dir: Path) -> None:
    """No no-retrieval cell in the run: the conditional rates stay, and every report says they have no
    baseline (summary.json, report.md, the MLflow tag), never silently."""
    from biorab.experiment import ExperimentConfig
    from biorab.tracking.cell_runs import ci_tags

    config = attribution_config(tmp_path, data_dir, COPY_TOP).model_dump(mode="json")
    config["retrieval"] = config["retrieval"][1:]  # the counterfactual cells only
    result = run_experiment(ExperimentConfig.model_validate(config))
    report = result.report_path.read_text()
    for cell in result.cells:
        assert cell.metrics["misled_rate"]["value"] == 1.0
        assert "misled_excess" not in cell.metrics and "helped_rate" not in cell.metrics
        assert cell.extra["attribution"]["baseline"] == "no baseline"
        assert ci_tags(cell)["attribution.baseline"] == "no baseline"
        assert f"| {cell.plan.label} | no baseline |" + " no baseline |" * 8 in report
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert {c["attribution"]["baseline"] for c in summary["cells"]} == {"no baseline"}


def test_a_corpus_methods_wrong_labels_count_as_misleading(tmp_path: Path, data_dir: Path) -> None:
    """A Detect-and-Correct cell whose (scripted) review keeps every testbed corruption and "corrects" every
    clean item to the other class: the method's wrong labels are tagged corrupted (how: method, naming
    it) though no ledger lists them, and the misled rate counts them, as recomputed here from the hits and
    the dataset's own training labels."""
    from biorab.datasets import load_dataset
    from biorab.experiment import ExperimentConfig

    train = {ex.id: ex.label for ex in load_dataset("ade_corpus_v2", "train", data_dir=data_dir)}
    ledger = _ledger(tmp_path, data_dir, "ade_corpus_v2")
    flipped = {"0": "1", "1": "0"}
    tests = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:12]
    # The RAL answers the other class than the gold: misled wherever a misleading hit carries that label.
    answers = {ex.id: flipped[ex.label] for ex in tests}
    answers.update({f"{i}/detect": "correct" if i in ledger else f"incorrect: {flipped[label]}"
                    for i, label in train.items()})
    result = run_experiment(ExperimentConfig.model_validate({
        "name": "method", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": 12}],
        "retrieval": [{"testbed": "counterfactual", "rate": RATE, "retriever": "bm25",
                       "method": "detect_correct"}],
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers, "answer": "correct"}},
        "sampling": {"max_tokens": 8}, "n_boot": 50, "tracking": {"enabled": False}}))
    (cell,) = result.cells
    rows = pq.read_table(cell.predictions_path).to_pylist()
    attribution = read_attribution(result.run_dir / "cells" / cell.plan.cell_id)
    by_method = misleading = misled = 0
    for row in rows:
        gold, hits = row["label"], json.loads(row["hits"])
        tags = json.loads(attribution[row["id"]]["hit_tags"])
        for hit, tag in zip(hits, tags, strict=True):
            wrong = hit["value"] != train[hit["doc_id"]]
            assert tag["corrupted"] is wrong
            if hit["doc_id"] not in ledger:  # every clean item was relabelled by the method
                assert (tag["how"], tag["method"]) == ("method", "detect_correct")
                by_method += 1
        bad = [h["value"] for h in hits if h["value"] != train[h["doc_id"]] and h["value"] != gold]
        misleading += bool(bad)
        misled += bool(bad) and row["pred_label"] in bad
    assert by_method > 0 and misleading > 0
    assert cell.extra["attribution"]["with_misleading"] == misleading
    assert cell.metrics["misled_rate"]["value"] == pytest.approx(misled / misleading)


def test_a_cell_pairs_with_the_twin_of_its_own_slice(tmp_path: Path, data_dir: Path) -> None:
    """A 1:1 resample of the split and its first 3 rows, each with and without retrieval, in one run: each
    retrieving cell is paired with the no-retrieval cell of its own slice, on all its instances. The 1:1
    twin sorts first by cell id and holds the 3 plain instances too: without the slice match the plain cell
    would have taken it."""
    from biorab.experiment import ExperimentConfig

    result = run_experiment(ExperimentConfig.model_validate({
        "name": "sb", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "resample": {"ratio": "1:1", "seed": 0}},
                     {"name": "ade_corpus_v2", "limit": 3}],
        "retrieval": [{"testbed": "none"}, {"testbed": "labeled", "retriever": "bm25"}],
        "backend": {"name": "fake", "params": COPY_TOP},
        "sampling": {"max_tokens": 8}, "n_boot": 20, "tracking": {"enabled": False}}))
    twins = {c.plan.cell_id: c for c in result.cells if not c.plan.retrieves}
    assert sorted(twins)[0].startswith("ade_corpus_v2-test-1to1s0__none")
    ids = {c.plan.label: {r["id"] for r in pq.read_table(c.predictions_path).to_pylist()}
           for c in result.cells}
    assert ids["ade_corpus_v2-test__none"] <= ids["ade_corpus_v2-test-1to1s0__none"]
    paired = {}
    for cell in (c for c in result.cells if c.plan.retrieves):
        twin = twins[cell.extra["attribution"]["twin_cell_id"]]
        paired[cell.plan.label.split("__")[0]] = twin.plan.label.split("__")[0]
        assert cell.extra["attribution"]["paired"] == cell.n
    assert paired == {"ade_corpus_v2-test-1to1s0": "ade_corpus_v2-test-1to1s0",
                      "ade_corpus_v2-test": "ade_corpus_v2-test"}


def test_the_copier_is_misled_every_time_on_every_counterfactual_cell(tmp_path: Path, data_dir: Path) -> None:
    """Every fixture dataset at counterfactual 20% and 100%, BM25 k = 1 without ties (`keep_ties: false`:
    Hetionet's link queries tie on 9 hits): the copier answers its only hit, so wherever that hit is
    misleading it is misled, misled_rate exactly 1 (SemClass at 100% measured 0.54 under the old
    denominator, which kept corruptions that carry the gold)."""
    from biorab.experiment import ExperimentConfig

    names = ("ade", "ade_corpus_v2", "chemprot", "git", "hetionet", "medmcqa", "pharmkg", "semclass")
    result = run_experiment(ExperimentConfig.model_validate({
        "name": "all", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": n, "limit": 12} for n in names],
        "retrieval": [{"testbed": "counterfactual", "rate": r, "retriever": "bm25", "k": 1,
                       "keep_ties": False} for r in (0.2, 1.0)],
        "backend": {"name": "fake", "params": COPY_TOP},
        "sampling": {"max_tokens": 64}, "n_boot": 0, "tracking": {"enabled": False}}))
    misled, agrees = {}, {}
    for cell in result.cells:
        assert cell.plan.retrieval is not None
        key = (cell.plan.dataset, cell.plan.retrieval.rate)
        misled[key] = cell.metrics["misled_rate"]["value"]
        agrees[key] = cell.extra["attribution"]["corruption_agrees_with_gold"]
        rows = pq.read_table(cell.predictions_path).to_pylist()
        assert all(len(json.loads(r["hits"])) == 1 for r in rows)
    assert len(misled) == 16
    # Every cell at 100% has misleading evidence; a cell at 20% without any has no misled rate (None).
    assert all(v == 1.0 for (_, rate), v in misled.items() if rate == 1.0), misled
    assert all(v in (1.0, None) for v in misled.values()), misled
    assert agrees[("semclass", 1.0)] > 0  # the old denominator held these
