"""`biorab.replay.difference_cause`: why a served answer differs from a run's row, from what the endpoint
says about the RAL (its ``/v1/models`` entry) and the row's own generation key."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from biorab.caches import generation_key
from biorab.common.records import OutputConstraint, Prompt
from biorab.experiment import ExperimentConfig
from biorab.generation.base import SamplingParams
from biorab.replay import difference_cause

CONFIG = ExperimentConfig.model_validate({
    "name": "r", "datasets": [{"name": "ade_corpus_v2", "limit": 2}],
    "retrieval": [{"testbed": "labeled", "retriever": "bm25", "k": 1, "template": "bm25"}],
    "backend": {"name": "transformers", "params": {"model": "smollm2"}}, "sampling": {"max_tokens": 8}})
(CELL,) = CONFIG.cells()
PROMPT = Prompt("ade_corpus_v2/test/0", "Sentence: aspirin. Answer:", ("\n",),
                OutputConstraint(choices=("1", "0")))
DIGEST = "weights-a"


def _row() -> dict[str, Any]:
    return {"id": PROMPT.example_id, "prompt": PROMPT.text, "stop": json.dumps(list(PROMPT.stop)),
            "constraint": PROMPT.constraint.to_json() if PROMPT.constraint else None,
            "gen_key": generation_key(DIGEST, PROMPT, CONFIG.sampling)}


def _info(**over: Any) -> dict[str, Any]:
    return {"dataset": "ade_corpus_v2", "retrieval": CELL.retrieval.model_dump(mode="json"),
            "sampling": CONFIG.sampling.model_dump(mode="json"), "parser": CONFIG.parser,
            "backend": "transformers", "model_digest": DIGEST, **over}


def test_the_same_key_leaves_batch_composition() -> None:
    assert difference_cause(CONFIG, CELL, _row(), _info()) == "batch composition"


def test_another_model_digest_on_the_same_engine_is_the_adapter_version() -> None:
    assert difference_cause(CONFIG, CELL, _row(), _info(model_digest="weights-b")) == "adapter version"


def test_another_engine() -> None:
    assert difference_cause(CONFIG, CELL, _row(), _info(backend="vllm", model_digest="v")) == "engine"


def test_another_retrieval_setting_or_sampling_is_the_config() -> None:
    deeper = {**CELL.retrieval.model_dump(mode="json"), "k": 3}
    assert difference_cause(CONFIG, CELL, _row(), _info(retrieval=deeper)) == "config"
    longer = SamplingParams(max_tokens=16).model_dump(mode="json")
    assert difference_cause(CONFIG, CELL, _row(), _info(sampling=longer, backend="vllm")) == "config"


# ---- the cause is decided per field: only a cause that can change that field


def test_evidence_and_prompt_differences_are_config_or_unexplained() -> None:
    for name in ("evidence", "prompt"):
        # neither the engine, the weights nor the batch changes retrieval or rendering
        assert difference_cause(CONFIG, CELL, _row(), _info(), name) == "unexplained"
        assert difference_cause(CONFIG, CELL, _row(), _info(backend="vllm", model_digest="v"), name) \
            == "unexplained"
        deeper = {**CELL.retrieval.model_dump(mode="json"), "k": 3}
        assert difference_cause(CONFIG, CELL, _row(), _info(retrieval=deeper), name) == "config"


def test_an_answer_to_another_prompt_is_put_down_to_the_prompt() -> None:
    assert difference_cause(CONFIG, CELL, _row(), _info(), "answer", prompt_differs=True) == "prompt"
    assert difference_cause(CONFIG, CELL, _row(), _info(), "verdict", prompt_differs=True) == "prompt"


def test_a_verdict_that_differs_on_the_same_text_is_unexplained() -> None:
    assert difference_cause(CONFIG, CELL, _row(), _info(), "verdict", answer_differs=False) == "unexplained"
    assert difference_cause(CONFIG, CELL, _row(), _info(), "verdict", answer_differs=True) \
        == "batch composition"


def test_sampled_decoding_is_unexplained_not_batch_composition() -> None:
    sampled = CONFIG.model_copy(update={"sampling": SamplingParams(max_tokens=8, temperature=0.7, seed=1)})
    info = _info(sampling=sampled.sampling.model_dump(mode="json"))
    row = {**_row(), "gen_key": generation_key(DIGEST, PROMPT, sampled.sampling)}
    assert difference_cause(sampled, CELL, row, info, "answer") == "unexplained"


# ---- replay sends the rows the run scored, not the history's failed attempts


def test_replay_sends_the_scored_rows_only(tmp_path: Path) -> None:
    import pyarrow.parquet as pq
    import yaml

    from biorab.ral.specs.rows import to_table
    from biorab.replay import replay, report

    run_dir = tmp_path / "run"
    (run_dir / "predictions").mkdir(parents=True)
    (run_dir / "config.yaml").write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")), encoding="utf-8")
    scored = {**_row(), "text": "aspirin.", "fields": "{}", "order": 0, "hits": "[]", "gen_text": "1",
              "pred_label": "1", "pred_ok": True, "cell_id": CELL.cell_id}
    failed = {**scored, "gen_text": "", "gen_error": "timeout", "pred_label": None, "pred_ok": False}
    # the cell's history holds a failed attempt too; only the predictions file is what the run scored
    (run_dir / "cells" / CELL.cell_id).mkdir(parents=True)
    pq.write_table(to_table([failed, scored]), run_dir / "cells" / CELL.cell_id / "part-a.parquet")
    pq.write_table(to_table([scored]), run_dir / "predictions" / f"{CELL.cell_id}.parquet")
    sent: list[dict[str, Any]] = []

    def post(path: str, *, cast_to: object, body: dict[str, Any]) -> dict[str, Any]:
        sent.append(body)
        return {"evidence": [{"id": "d/train/1"}], "prompt": PROMPT.text, "label": "0",
                "generation": {"text": "0"}, "prediction": {"ok": True}}

    model = SimpleNamespace(id=CELL.label, model_extra={"biorab": _info()})
    client = SimpleNamespace(models=SimpleNamespace(list=lambda: SimpleNamespace(data=[model])), post=post)
    (result,) = replay(run_dir, client)
    assert [b["id"] for b in sent] == [PROMPT.example_id] and result.n == 1
    causes = {d.field: d.cause for d in result.differences}
    assert causes == {"evidence": "unexplained", "answer": "batch composition",
                      "verdict": "batch composition"}
    assert "by cause: {'unexplained': 1, 'batch composition': 2}" in report([result])


def test_a_cell_the_run_has_not_scored_is_skipped_with_a_note(tmp_path: Path) -> None:
    import yaml

    from biorab.replay import replay

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")), encoding="utf-8")
    model = SimpleNamespace(id=CELL.label, model_extra={"biorab": _info()})
    client = SimpleNamespace(models=SimpleNamespace(list=lambda: SimpleNamespace(data=[model])), post=None)
    (result,) = replay(run_dir, client)
    assert result.n == 0 and result.note is not None and "has not scored" in result.note
