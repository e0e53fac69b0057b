"""Several RALs behind one endpoint on the transformers path (local Ray, Serve's proxy, the packaged
SmolLM2): two tiny LoRA adapters made with peft on the base model and a third RAL on the bare base share
ONE generator deployment (one engine, PEFT adapter switching, at most one adapter loaded at once); the
request's ``model`` picks the RAL, ``/v1/models`` lists them with their adapters, and an unknown model is
a 404 naming the choices. Tracing is on (sample rate 1): each answer is an MLflow trace tagged with its
RAL. Each served answer equals the bare transformers backend's with that adapter
(unmerged) on the served prompt.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.support.serving import free_port, smollm2_loras, staged_data

pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(900)]
BACKEND = {"name": "transformers", "params": {"model": "smollm2", "dtype": "float32", "num_threads": 1,
                                              "batch_size": 1}}
SAMPLING = {"max_tokens": 6, "temperature": 0.0, "seed": 0, "constrained": False}
LABELED = {"testbed": "labeled", "retriever": "bm25", "k": 1, "template": "bm25"}
INPUT = "Severe rash after amoxicillin."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve.app import compose
    from serve.config import load_serve_config

    tmp = tmp_path_factory.mktemp("rals")
    lora_a, lora_b = smollm2_loras(tmp)
    cfg = load_serve_config(overrides={
        "name": "rals", "data_dir": str(staged_data()), "backend": BACKEND, "sampling": SAMPLING,
        "retrieval": {"testbed": "none"}, "cache": {"dir": str(tmp / "cache")}, "auth": {"enabled": False},
        "max_loaded_adapters": 1,
        "mlflow_tracking_uri": f"sqlite:///{tmp / 'mlflow.db'}",
        "tracing": {"enabled": True, "sample_rate": 1.0},
        "rals": [{"name": "ral-a", "adapter": str(lora_a), "retrieval": LABELED},
                 {"name": "ral-b", "adapter": str(lora_b)},
                 {"name": "ral-base"}],
        "deployments": {"ingress": {"num_cpus": 0.1}, "retriever": {"num_cpus": 0.1},
                        "generator": {"num_cpus": 0.5, "batch_wait_timeout_s": 0.01}}})
    temp = tempfile.mkdtemp(prefix="rr-", dir="/tmp")  # short: Ray's unix socket paths are limited
    port = free_port()
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=300_000_000,
             _temp_dir=temp, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(compose(cfg, None), name=cfg.name, route_prefix="/")
        yield {"url": f"http://127.0.0.1:{port}", "a": lora_a, "b": lora_b,
               "generator": serve.get_deployment_handle("generator", cfg.name),
               "ingress": serve.get_deployment_handle("ingress", cfg.name), "mlflow": cfg.mlflow_tracking_uri}
    finally:
        serve.shutdown()
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def ral(server: dict[str, Any], model: str) -> dict[str, Any]:
    r = requests.post(server["url"] + "/v1/ral", json={"model": model, "input": INPUT}, timeout=600)
    assert r.status_code == 200, r.text
    return dict(r.json())


def test_models_lists_every_ral_with_its_adapter(server: dict[str, Any]) -> None:
    data = requests.get(server["url"] + "/v1/models", timeout=600).json()["data"]
    by_id = {m["id"]: m["biorab"] for m in data}
    assert list(by_id) == ["ral-a", "ral-b", "ral-base"]
    # adapters by folder name, never the server's paths (issue 40)
    assert (by_id["ral-a"]["adapter"], by_id["ral-b"]["adapter"]) == (server["a"].name, server["b"].name)
    assert server["a"].name != server["b"].name and "/" not in by_id["ral-a"]["adapter"]
    assert by_id["ral-base"]["adapter"] is None
    assert {m["adapter_version"] for m in by_id.values()} == {None}  # local folders: no registry version
    testbeds = (by_id["ral-a"]["retrieval"]["testbed"], by_id["ral-b"]["retrieval"]["testbed"])
    assert testbeds == ("labeled", "none")
    assert {m["base_model"] for m in by_id.values()} == {"smollm2"}


def test_each_ral_answers_by_model_with_its_adapter_on_one_engine(server: dict[str, Any]) -> None:
    from openai import OpenAI

    from biorab.common.records import Prompt
    from biorab.generation import build_backend
    from biorab.generation.base import SamplingParams
    from biorab.tasks import get_template

    answers = {model: ral(server, model) for model in ("ral-a", "ral-b", "ral-base", "ral-a")}
    texts = {m: a["generation"]["text"] for m, a in answers.items()}
    assert len(set(texts.values())) == 3, texts  # each adapter (and none) answers differently
    assert len(answers["ral-a"]["evidence"]) == 1 and answers["ral-b"]["evidence"] == []
    stats = server["generator"].adapter_stats.remote().result()
    assert stats["loaded"] == [str(server["a"])]  # max_loaded_adapters: 1, the last one used
    assert stats["loads"] == 3  # a, b, then a again after b evicted it
    sampling = SamplingParams(**SAMPLING)
    stops = get_template("ade_corpus_v2").stop  # what the served RALs' template stops at
    for model, adapter in (("ral-a", server["a"]), ("ral-b", server["b"]), ("ral-base", None)):
        params = {**BACKEND["params"], "merge_adapter": False,
                  **({"adapter_path": str(adapter)} if adapter else {})}
        backend = build_backend("transformers", params)
        try:
            (direct,) = backend.generate([Prompt("d", answers[model]["prompt"], stops)], sampling)
        finally:
            backend.close()
        assert direct.text == texts[model], (model, direct.text, texts[model])
    client = OpenAI(base_url=server["url"] + "/v1", api_key="unused", max_retries=0, timeout=600)
    chat = client.chat.completions.create(model="ral-b", messages=[{"role": "user", "content": INPUT}])
    assert chat.model == "ral-b" and chat.model_extra["biorab"]["adapter"] == server["b"].name
    assert chat.model_extra["biorab"]["prediction"]["raw"] == texts["ral-b"]


def test_an_unknown_model_is_a_404_naming_the_choices(server: dict[str, Any]) -> None:
    r = requests.post(server["url"] + "/v1/chat/completions", timeout=60,
                      json={"model": "ral-c", "messages": [{"role": "user", "content": INPUT}]})
    assert r.status_code == 404
    assert r.json()["error"]["message"] == ("model 'ral-c' is not served here; GET /v1/models lists "
                                            "'ral-a', 'ral-b', 'ral-base'")
    r = requests.post(server["url"] + "/v1/ral", json={"model": "nope", "input": INPUT}, timeout=60)
    assert r.status_code == 404 and r.json()["error"]["param"] == "model"


def test_served_answers_are_traced_into_the_configured_experiment(server: dict[str, Any]) -> None:
    """tracing.sample_rate 1: every answer of the tests above is a trace tagged with its RAL."""
    from mlflow import MlflowClient

    stats = server["ingress"].trace_stats.remote().result()
    assert stats["failed"] == 0 and stats["written"] >= 5
    client = MlflowClient(tracking_uri=server["mlflow"])
    experiment = client.get_experiment_by_name("biorab-serve")
    traces = client.search_traces(experiment_ids=[experiment.experiment_id], max_results=100)
    assert len(traces) == stats["written"]
    assert {t.info.tags["biorab.ral"] for t in traces} == {"ral-a", "ral-b", "ral-base"}
    tagged = {t.info.tags["biorab.ral"]: t.info.tags["biorab.adapter"] for t in traces}
    assert tagged == {"ral-a": str(server["a"]), "ral-b": str(server["b"]), "ral-base": ""}
    with_hits = [t for t in traces if t.info.tags["biorab.ral"] == "ral-a"][0]
    assert {s.span_type for s in with_hits.data.spans} == {"CHAIN", "RETRIEVER", "LLM", "PARSER"}
