"""Rows reach the LLM in prompt-prefix order (instruction + retrieved example), and the results are those
of the unordered run: same rows, prompts, generation keys and predictions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.common.records import Generation, Prompt
from biorab.generation.base import SamplingParams
from biorab.generation.fake import FakeBackend
from biorab.runner import run_experiment
from biorab.runner.executors.local import LocalExecutor
from tests.support.local_runs import make_config

RETRIEVAL = [{"testbed": "none"},
             {"testbed": "labeled", "retriever": "bm25", "k": 1, "template": "bm25"},
             {"testbed": "counterfactual", "rate": 1.0, "retriever": "bm25", "k": 1, "template": "bm25"}]
# written per attempt or per batch: not part of a row's result
VOLATILE = {"attempt", "written_at", "gen_batch_size"}


class RecordingFake(FakeBackend):
    """The fake backend, keeping the prompts in the order it was asked to generate them."""

    def __init__(self, params: FakeBackend.Params) -> None:
        super().__init__(params)
        self.seen: list[str] = []

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        self.seen += [p.text for p in prompts]
        return super().generate(prompts, params)


def run(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch, name: str, *, ordered: bool
        ) -> tuple[dict[str, list[dict]], list[str], list[dict]]:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / f"cache-{name}"))  # both runs generate everything
    config = make_config(tmp_path, data_dir, name=name, retrieval=RETRIEVAL)
    backend = RecordingFake(FakeBackend.Params(**config.backend.params))
    result = run_experiment(config, executor=LocalExecutor(backend, prefix_order=ordered))
    cells = {c.plan.label: [{k: v for k, v in r.items() if k not in VOLATILE}
                            for r in pq.read_table(c.predictions_path).to_pylist()] for c in result.cells}
    return cells, backend.seen, [r for rows in cells.values() for r in rows]


def runs_of(values: list[str]) -> int:
    """How many maximal runs of equal consecutive values `values` has."""
    return sum(1 for i, v in enumerate(values) if i == 0 or values[i - 1] != v)


def test_prefix_order_groups_examples_and_changes_no_result(tmp_path: Path, data_dir: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    plain, plain_seen, plain_rows = run(tmp_path, data_dir, monkeypatch, "plain", ordered=False)
    ordered, ordered_seen, ordered_rows = run(tmp_path, data_dir, monkeypatch, "ordered", ordered=True)
    assert ordered == plain  # same cells, rows (in slice order), prompts, hits, keys, predictions
    assert sorted(ordered_seen) == sorted(plain_seen) and len(ordered_seen) == 3 * (6 + 5)

    # the prefix a retrieving prompt shares with others: its instruction and retrieved example
    example = {r["prompt"]: r["hits"].split('"key": ')[1].split('", "value"')[0] for r in ordered_rows
               if r["hits"] != "[]"}
    assert len(example) == 2 * (6 + 5)
    firsts = [example[p] for p in ordered_seen if p in example]
    plain_firsts = [example[p] for p in plain_seen if p in example]
    # ordered: each retrieved example's prompts (labeled and counterfactual corpus) run back to back;
    # as given (cell by cell), every example is asked twice, once per cell
    assert runs_of(firsts) == len(set(firsts)) == 11
    assert runs_of(plain_firsts) == len(plain_firsts) == 22
    # prompts of one instruction stay together: the zero-shot rows first, then each dataset's retrieval
    assert ordered_seen[:6] == plain_seen[:6]
    keys = {r["gen_key"] for r in plain_rows}
    assert keys == {r["gen_key"] for r in ordered_rows} and len(keys) == len(plain_rows)
