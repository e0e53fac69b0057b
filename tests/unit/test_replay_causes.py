"""`biorab.replay.difference_cause`: why a served answer differs from a run's row, from what the endpoint
says about the RAL (its ``/v1/models`` entry) and the row's own generation key."""

from __future__ import annotations

import json
from typing import Any

from biorab.caches import generation_key
from biorab.experiment import ExperimentConfig
from biorab.generation.base import SamplingParams
from biorab.records import OutputConstraint, Prompt
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
