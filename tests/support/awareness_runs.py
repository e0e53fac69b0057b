"""The negative-awareness runs of tests/integration/test_run_awareness.py, shared with the Ray test."""

from __future__ import annotations

from pathlib import Path

from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig
from biorab.ral import probe_prompt_id

N = 6


WRONG = ("ade_corpus_v2/test/2", "ade_corpus_v2/test/4")  # task answers flipped: the true negatives


# Probe answers (the probe asks for "False" when the example is negative, "True" when it is not):
PROBES = {
    "ade_corpus_v2/test/0": "True",  # false negative judged not negative -> counts in f
    "ade_corpus_v2/test/1": "True-The retrieved example is not a negative example",  # robust parse: True
    "ade_corpus_v2/test/2": "False",  # true negative judged negative -> counts in t
    "ade_corpus_v2/test/3": "False",  # false negative judged negative -> not in f
    "ade_corpus_v2/test/4": "maybe",  # true negative, unparsable -> unaware
    "ade_corpus_v2/test/5": "True",  # f
}


# l^t = 2 (ids 2, 4), t = 1 -> 1/2; l^f = 4 (ids 0, 1, 3, 5), f = 3 -> 3/4.
COUNTS = {"l_t": 2, "t": 1, "l_f": 4, "f": 3, "unparsed": 1, "not_probed": 0}


def answers(data_dir: Path) -> dict[str, str]:
    ans = {ex.id: ex.label for ex in load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:N]}
    for i in WRONG:
        ans[i] = "0" if ans[i] == "1" else "1"
    ans.update({probe_prompt_id(i): a for i, a in PROBES.items()})
    return ans


def make_config(tmp_path: Path, data_dir: Path, retrieval: list[dict[str, object]]) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": "aware",
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}],
        "retrieval": retrieval,
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers(data_dir)}},
        "sampling": {"max_tokens": 16},
        "n_boot": 50,
        "resources": {"llm": {"batch_size": 4}},
        "tracking": {"enabled": False},
    })


def na_config(tmp_path: Path, data_dir: Path) -> ExperimentConfig:
    return make_config(tmp_path, data_dir, [{"testbed": "negative_awareness", "retriever": "bm25"}])
