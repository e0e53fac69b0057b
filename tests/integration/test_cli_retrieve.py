"""`biorab retrieve` and `biorab corpus build` end to end, as a user runs them."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest


def _biorab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "biorab.cli.main", *args], capture_output=True, text=True, timeout=300
    )


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_retrieve_shows_scored_hits_as_json(data_dir: Path) -> None:
    out = _biorab(
        "retrieve", "--dataset", "hetionet", "--limit", "2", "--k", "3", "--no-keep-ties", "--json",
        "--data-dir", str(data_dir)
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (report["dataset"], report["testbed"], report["retriever"], report["corpus_items"]) == (
        "hetionet",
        "labeled",
        "bm25",
        4000,
    )
    params = report["retriever_params"]  # the tokenizer, stopwords and variant behind the hits
    assert (params["method"], params["stopwords"], params["token_pattern"], params["lower"]) == (
        "lucene",
        "english",
        r"(?u)\b\w\w+\b",
        True,
    )
    assert len(report["retriever_fingerprint"]) == 64
    assert [r["id"] for r in report["results"]] == ["hetionet/test/0", "hetionet/test/1"]
    for result in report["results"]:
        hits = result["hits"]
        assert len(hits) == 3 and [h["rank"] for h in hits] == [0, 1, 2]
        assert all(h["doc_id"].startswith("hetionet/train/") for h in hits)
        assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
        assert result["label"] not in result["query"]  # the query is the input alone


def test_retrieve_text_output_on_a_counterfactual_testbed(data_dir: Path) -> None:
    out = _biorab(
        "retrieve",
        "-d",
        "ade",
        "--testbed",
        "counterfactual",
        "--rate",
        "0.2",
        "--keep-ties",
        "--limit",
        "1",
        "--data-dir",
        str(data_dir),
    )
    assert out.returncode == 0, out.stderr
    assert "testbed=counterfactual rate=0.2 retriever=bm25" in out.stdout
    params = 'retriever_params: {"b": 0.75, "dedupe": true, "delta": 0.5, "epsilon": 0.25, "fields": "key"'
    assert params in out.stdout
    assert "ade/test/0" in out.stdout and "#0 " in out.stdout


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_retrieve_eval_reports_recall_and_mrr(data_dir: Path) -> None:
    out = _biorab(
        "retrieve", "-d", "hetionet", "--eval", "--limit", "50", "--json", "--data-dir", str(data_dir)
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    # Hetionet keys are unique "What is the relationship between X and Y ?" strings: BM25 finds each one.
    assert report["n"] == 50 and report["recall@1"] == 1.0 and report["mrr"] == 1.0


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_corpus_build_writes_the_folder(data_dir: Path, tmp_path: Path) -> None:
    out = _biorab(
        "corpus",
        "build",
        "-d",
        "ade_corpus_v2",
        "--kind",
        "counterfactual",
        "--rate",
        "0.2",
        "--seed",
        "5",
        "--out",
        str(tmp_path / "cf"),
        "--data-dir",
        str(data_dir),
    )
    assert out.returncode == 0, out.stderr
    manifest = json.loads((tmp_path / "cf" / "manifest.json").read_text())
    assert manifest["counts"]["items"] == 4000 and manifest["counts"]["ledger"] == 800
    corpus_bytes = (tmp_path / "cf" / "corpus.jsonl").read_bytes()
    assert hashlib.sha256(corpus_bytes).hexdigest() == manifest["digest"]
    assert len((tmp_path / "cf" / "ledger.jsonl").read_text().splitlines()) == 800
    assert f"digest {manifest['digest']}" in out.stdout


def test_bad_input_exits_2_with_a_clear_message(data_dir: Path) -> None:
    cases = [
        (["--k", "0"], "k must be a positive integer"),
        (["--retriever", "bm52"], "unknown retriever 'bm52'"),
        (["--testbed", "counterfactual"], "needs a rate"),
        (
            ["--retriever", "dense", "--model", "/nonexistent/model"],
            "model path /nonexistent/model does not exist",
        ),
        (["--model", "/some/model"], "--model applies to the dense and hybrid retrievers only, not 'bm25'"),
        (["--encoder", "medcpt"], "--encoder applies to the dense and hybrid retrievers only"),
        (["--testbed", "noisy"], "unknown testbed 'noisy'. Known testbeds: counterfactual, "
                                 "counterfactual_far, counterfactual_near, diverse, labeled"),
        (["--retriever", "dense", "--encoder", "bert"], "key 'encoder': Input should be 'minilm'"),
    ]
    for extra, message in cases:
        out = _biorab("retrieve", "-d", "hetionet", "--limit", "1", "--data-dir", str(data_dir), *extra)
        assert out.returncode == 2, (extra, out.stdout, out.stderr)
        assert message in out.stderr, (extra, out.stderr)


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_retrieve_keeps_ties_by_default_as_run_configs(data_dir: Path) -> None:
    """One default: `retrieve` keeps the hits tied with the k-th score, as `retrieval[].keep_ties`."""
    from biorab.experiment import RetrievalSpec

    assert RetrievalSpec(testbed="labeled").keep_ties is True
    out = _biorab("retrieve", "--dataset", "hetionet", "--limit", "2", "--k", "3", "--json", "--data-dir",
                  str(data_dir))
    assert out.returncode == 0, out.stderr
    # ties within the run's tie_pool (8 candidates past k), as a run config's retrieval setting selects them
    assert [len(r["hits"]) for r in json.loads(out.stdout)["results"]] == [4, 11]


def test_retrieve_can_exclude_the_query_own_text(data_dir: Path) -> None:
    # Training sentences queried against their own (labeled) corpus: each finds itself first, unless excluded.
    args = ("retrieve", "--dataset", "ade_corpus_v2", "--split", "train", "--limit", "4", "--k", "2",
            "--no-keep-ties", "--json", "--data-dir", str(data_dir))
    own = {}
    for flag in ("--keep-test-duplicates", "--exclude-test-duplicates"):
        out = _biorab(*args, flag)
        assert out.returncode == 0, out.stderr
        results = json.loads(out.stdout)["results"]
        assert all(len(r["hits"]) <= 2 for r in results)  # BM25 returns matching items only
        own[flag] = sum(any(h["key"] == r["query"] for h in r["hits"]) for r in results)
    assert own == {"--keep-test-duplicates": 4, "--exclude-test-duplicates": 0}


def test_retrieve_builds_its_corpus_once(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The corpus whose digest the header prints is the one the RAL's retriever indexes: one build, shared
    through the core's per-process memo, for the hits and for ``--eval``."""
    import biorab.corpora
    from biorab.cli.retrieve import retrieve
    from biorab.ral.parts.testbeds import forget_testbeds

    real, built = biorab.corpora.build_corpus, []
    monkeypatch.setattr(biorab.corpora, "build_corpus", lambda *a, **kw: built.append(a) or real(*a, **kw))
    forget_testbeds()
    retrieve(dataset="ade_corpus_v2", testbed="counterfactual", rate=0.5, limit=2, as_json=True,
             data_dir=data_dir)
    shown = json.loads(capsys.readouterr().out)
    assert built == [("counterfactual", "ade_corpus_v2")] and len(shown["results"]) == 2
    retrieve(dataset="ade_corpus_v2", testbed="counterfactual", rate=0.5, limit=3, as_json=True,
             data_dir=data_dir, evaluate=True)
    scored = json.loads(capsys.readouterr().out)
    assert scored["corpus_digest"] == shown["corpus_digest"] and len(built) == 1
