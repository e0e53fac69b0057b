"""The Serve app for real (local Ray, Serve's HTTP proxy, the official openai client) with the fake backend:
endpoints, served == evaluated, and every bad request of docs/serve.md with its status and message.

One Serve instance for the whole module (2 shared cores): the app is built with small limits (4 ongoing +
4 queued requests at the ingress, a 300-token context, a 16 KiB body) and a fake backend that takes
0.2 s per call, so that the overload test can fill the queue.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from biorab.common.records import Example
from biorab.datasets import load_dataset
from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from biorab.runner.store.shards import read_all_rows
from tests.support.serving import free_port, staged_data

pytestmark = [pytest.mark.slow, pytest.mark.full_data, pytest.mark.timeout(600)]
REPO = Path(__file__).resolve().parents[2]



KEYS = ("key-one", "key-two")
FILE_KEY = "key-from-file"
N = 8
RETRIEVAL = {"testbed": "labeled", "retriever": "bm25", "k": 1, "template": "bm25", "awareness_probe": True,
             "probe_any_testbed": True}
FAKE = {"name": "fake", "params": {"mode": "choice", "delay_s": 0.2}}
SAMPLING = {"max_tokens": 32, "seed": 0}




@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import ray
    from ray import serve

    from serve.app import compose, key_digests
    from serve.config import load_serve_config

    tmp = tmp_path_factory.mktemp("serve")
    keys_file = tmp / "keys.txt"
    keys_file.write_text(f"# operators\n{FILE_KEY}\n", encoding="utf-8")
    cfg = load_serve_config(overrides={
        "name": "ral-test", "data_dir": str(staged_data()), "retrieval": RETRIEVAL, "backend": FAKE,
        "sampling": SAMPLING, "cache": {"dir": str(tmp / "cache")},
        "auth": {"api_keys_file": str(keys_file)},
        "limits": {"max_body_bytes": 16_384, "max_input_chars": 4_000, "max_k": 5, "context_tokens": 300},
        "deployments": {"ingress": {"max_ongoing_requests": 4, "max_queued_requests": 4, "retry_after_s": 2},
                        "generator": {"num_cpus": 0.25, "batch_wait_timeout_s": 0.01}},
    })
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BIORAB_API_KEYS", ",".join(KEYS))
        digests = key_digests(cfg)
    port, metrics_port = free_port(), free_port()
    temp = tempfile_dir()
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=500_000_000,
             _temp_dir=temp, _metrics_export_port=metrics_port, log_to_driver=False)
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(compose(cfg, digests), name=cfg.name, route_prefix="/")
        yield {"url": f"http://127.0.0.1:{port}", "cfg": cfg, "metrics": f"http://127.0.0.1:{metrics_port}"}
    finally:
        serve.shutdown()
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


def tempfile_dir() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="rs-", dir="/tmp")  # short: Ray's unix socket paths are limited


def post(server: dict[str, Any], path: str, body: Any, key: str | None = KEYS[0],
         **kw: Any) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    headers.update(kw.pop("headers", {}))
    return requests.post(server["url"] + path, json=body, headers=headers, timeout=60, **kw)


def assert_clean(body: str) -> None:
    """No stack trace, file path or exception repr reaches a client."""
    for leak in ("Traceback", "File \"", ".py", tempfile.gettempdir() + "/", "/home/", "Error("):
        assert leak not in body, body


# -- endpoints -----------------------------------------------------------------------------------------


def test_probes_and_models(server: dict[str, Any]) -> None:
    url = server["url"]
    assert requests.get(url + "/healthz", timeout=10).json() == {"status": "ok"}  # no key needed
    assert requests.get(url + "/readyz", timeout=10).json() == {"status": "ready", "model": "ral-test",
                                                                 "models": ["ral-test"]}
    assert requests.get(url + "/v1/models", timeout=10).status_code == 401
    auth = {"Authorization": f"Bearer {KEYS[1]}"}
    models = requests.get(url + "/v1/models", headers=auth, timeout=10).json()
    (entry,) = models["data"]
    assert (entry["id"], entry["object"]) == ("ral-test", "model")
    ext = entry["biorab"]
    assert (ext["base_model"], ext["adapter"], ext["backend"], ext["task"]) == \
        ("default", None, "fake", "classification")
    assert ext["retrieval"]["retriever"] == "bm25" and ext["retrieval"]["k"] == 1


def test_retrieve_returns_pinned_bm25_evidence(server: dict[str, Any]) -> None:
    r = post(server, "/v1/retrieve", {"input": "Severe skin rash after a single low dose of methotrexate.",
                                      "k": 2})
    assert r.status_code == 200
    ev = r.json()["evidence"]
    assert [e["id"] for e in ev] == ["ade_corpus_v2/train/2769", "ade_corpus_v2/train/1949"]
    assert ev[0]["text"] == ("Bone marrow aplasia and severe skin rash after a single low dose of "
                             "methotrexate.")
    assert ev[0]["label"] == "1" and ev[0]["score"] > ev[1]["score"] > 0


def test_openai_client_plain_and_streaming(server: dict[str, Any]) -> None:
    from openai import OpenAI

    client = OpenAI(base_url=server["url"] + "/v1", api_key=KEYS[0], max_retries=0)
    messages = [{"role": "system", "content": "ignored"},
                {"role": "user", "content": "The patient developed a rash after amoxicillin."}]
    plain = client.chat.completions.create(model="ral-test", messages=messages)  # type: ignore[arg-type]
    text = plain.choices[0].message.content
    ext = plain.model_extra["biorab"]
    assert text in ("0", "1") and ext["label"] == text and ext["prediction"]["ok"] is True
    assert ext["task"] == "classification" and len(ext["evidence"]) == 1
    assert ext["awareness"]["judgement"] in ("True", "False")
    assert ext["awareness"]["reject"] == (ext["awareness"]["judgement"] == "False")
    assert plain.usage is not None and plain.usage.completion_tokens == 1

    stream = client.chat.completions.create(model="ral-test", messages=messages, stream=True)  # type: ignore[arg-type]
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == text
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["biorab"]["evidence"] == ext["evidence"]


def test_served_equals_evaluated(server: dict[str, Any], data_dir: Path, tmp_path: Path) -> None:
    """The predictions (and hits, prompts, generations, probe judgements) `biorab run` records for the same
    config and backend are exactly what /v1/ral answers."""
    cfg = ExperimentConfig.model_validate({
        "name": "parity", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}], "retrieval": [RETRIEVAL], "backend": FAKE,
        "sampling": SAMPLING, "n_boot": 10, "tracking": {"enabled": False},
    })
    result = run_experiment(cfg)  # the in-process executor (the default), as `biorab run --no-ray`
    (cell,) = result.cells
    rows = {r["id"]: r for r in read_all_rows(result.run_dir / "cells" / cell.plan.cell_id)}
    examples: list[Example] = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:N]
    with ThreadPoolExecutor(4) as pool:  # within the ingress's 4 ongoing requests
        answers = list(pool.map(lambda ex: post(server, "/v1/ral", {
            "input": ex.text, "fields": ex.fields, "id": ex.id, "dataset": "ade_corpus_v2"}), examples))
    assert [a.status_code for a in answers] == [200] * N
    for ex, resp in zip(examples, answers, strict=True):
        got, row = resp.json(), rows[ex.id]
        assert (got["label"], got["prediction"]["ok"]) == (row["pred_label"], row["pred_ok"])
        assert got["prompt"] == row["prompt"] and got["generation"]["text"] == row["gen_text"]
        assert [e["id"] for e in got["evidence"]] == [h["doc_id"] for h in json.loads(row["hits"])]
        assert got["awareness"]["judgement"] == row["probe_judgement"]
    assert len({a.json()["label"] for a in answers}) == 2  # both labels occur: a constant would not pass


def test_served_equals_evaluated_with_a_hit_filter_and_a_corpus_method(
        server: dict[str, Any], data_dir: Path, tmp_path: Path) -> None:
    """A retrieval entry with ``filter`` (an awareness encoder re-ranks the hits) and ``method``
    (Detect-and-Correct transforms the counterfactual corpus before indexing): Serve assembles its
    retriever as `biorab run` does, so the served evidence, prompts and predictions are the evaluated ones.
    A second application beside the module's, on its own route prefix."""
    from ray import serve

    from biorab.learn.config import EncoderTrainParams
    from biorab.learn.encoder_model import new_encoder
    from serve.app import compose
    from serve.config import load_serve_config

    encoder = tmp_path / "encoder"
    new_encoder(EncoderTrainParams()).save(encoder)  # the packaged MiniLM as an (untrained) encoder
    entry = {"testbed": "counterfactual", "rate": 0.8, "retriever": "bm25", "k": 3, "keep_ties": False,
             "template": "bm25", "method": "detect_correct", "filter": {"encoder": str(encoder)}}
    backend = {"name": "fake", "params": {"mode": "choice"}}
    cfg = load_serve_config(overrides={
        "name": "ral-plugins", "data_dir": str(data_dir), "retrieval": entry, "backend": backend,
        "sampling": SAMPLING, "cache": {"dir": str(tmp_path / "serve-cache")}, "auth": {"enabled": False},
        "deployments": {name: {"num_cpus": 0.1} for name in ("ingress", "retriever", "generator")}})
    serve.run(compose(cfg, None), name="ral-plugins", route_prefix="/plugins")
    try:
        run_cfg = ExperimentConfig.model_validate({
            "name": "parity-plugins", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
            "datasets": [{"name": "ade_corpus_v2", "limit": N}], "retrieval": [entry], "backend": backend,
            "sampling": SAMPLING, "n_boot": 10, "tracking": {"enabled": False}})
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("BIORAB_CACHE_DIR", str(tmp_path / "run-cache"))  # its own transform, not Serve's
            result = run_experiment(run_cfg)
        (cell,) = result.cells
        rows = {r["id"]: r for r in read_all_rows(result.run_dir / "cells" / cell.plan.cell_id)}
        examples: list[Example] = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:N]
        answers = [requests.post(server["url"] + "/plugins/v1/ral", timeout=120, json={
            "input": ex.text, "fields": ex.fields, "id": ex.id}).json() for ex in examples]
    finally:
        serve.delete("ral-plugins")
    for ex, got in zip(examples, answers, strict=True):
        row = rows[ex.id]
        assert [e["id"] for e in got["evidence"]] == [h["doc_id"] for h in json.loads(row["hits"])]
        assert [e["label"] for e in got["evidence"]] == [h["value"] for h in json.loads(row["hits"])]
        assert got["prompt"] == row["prompt"] and got["label"] == row["pred_label"]
    # The encoder really re-ranked: BM25 order is by score, the filter's by encoder distance.
    scores = [[e["score"] for e in got["evidence"]] for got in answers]
    assert any(s != sorted(s, reverse=True) for s in scores), scores
    assert result.cells[0].extra["method"]["name"] == "detect_correct"


def test_a_request_label_space_and_k(server: dict[str, Any]) -> None:
    """`labels` reaches the structured-output constraint (the fake backend picks one of its choices) and
    the parser; `k` retrieves more evidence with the same selection rule."""
    bodies = [{"input": f"Methotrexate caused a rash, case {i}.", "labels": ["yes", "no"], "k": 3}
              for i in range(4)]
    got = [post(server, "/v1/ral", body).json() for body in bodies]
    assert {g["label"] for g in got} <= {"yes", "no"} and all(g["prediction"]["ok"] for g in got)
    assert all(len(g["evidence"]) >= 3 for g in got)
    assert got[0]["evidence"][0]["id"] == "ade_corpus_v2/train/2769"


def test_request_id_in_and_out(server: dict[str, Any]) -> None:
    r = post(server, "/v1/ral", {"input": "Aspirin caused gastric bleeding."},
             headers={"X-Request-ID": "req-42"})
    assert r.status_code == 200 and r.headers["X-Request-ID"] == "req-42"
    assert r.json()["request_id"] == "req-42" and r.json()["id"] == "req-42"
    assert r.json()["timings_ms"]["generation"] > 150  # the fake backend's 0.2 s per call, twice
    bad = post(server, "/v1/ral", {}, key=None)
    assert re.fullmatch(r"[0-9a-f-]{32,36}", bad.headers["X-Request-ID"])
    assert bad.json()["error"]["request_id"] == bad.headers["X-Request-ID"]


# -- bad requests ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", [None, "wrong-key", "key-one-and-more"])
def test_401_without_or_with_a_wrong_key(server: dict[str, Any], key: str | None) -> None:
    r = post(server, "/v1/ral", {"input": "x"}, key=key)
    assert r.status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer"
    assert r.json()["error"]["message"] == "missing or invalid API key: send 'Authorization: Bearer <key>'"
    assert r.json()["error"]["type"] == "authentication_error"


def test_401_for_a_non_bearer_scheme_and_keys_from_env_and_file_work(server: dict[str, Any]) -> None:
    r = requests.post(server["url"] + "/v1/ral", json={"input": "x"}, auth=("user", KEYS[0]), timeout=10)
    assert r.status_code == 401
    for key in (*KEYS, FILE_KEY):
        assert post(server, "/v1/retrieve", {"input": "rash"}, key=key).status_code == 200


@pytest.mark.parametrize(("path", "body", "field", "message"), [
    ("/v1/ral", {"text": "x"}, "input", "Field required"),
    ("/v1/ral", {"input": ""}, "input", "at least 1 character"),
    ("/v1/ral", {"input": "x", "k": 0}, "k", "greater than or equal to 1"),
    ("/v1/ral", {"input": "x", "k": 6}, "k", "at most 5"),
    ("/v1/ral", {"input": "x", "task": "qa"}, "task", "this RAL serves task 'classification', not 'qa'"),
    ("/v1/ral", {"input": "x", "id": "bad id with spaces"}, "id", "should match pattern"),
    ("/v1/ral", {"input": "x" * 4001}, "input", "4001 characters exceed the limit of 4000"),
    ("/v1/retrieve", {"input": "x", "k": "many"}, "k", "valid integer"),
    ("/v1/chat/completions", {"model": "ral-test", "messages": [{"role": "robot", "content": "x"}]},
     "messages.0.role", "Input should be"),
    ("/v1/chat/completions", {"model": "ral-test", "messages": []}, "messages", "at least 1 item"),
    ("/v1/chat/completions", {"model": "ral-test", "messages": [{"role": "system", "content": "x"}]},
     "messages", "needs at least one user message"),
])
def test_422_names_the_field(server: dict[str, Any], path: str, body: Any, field: str, message: str) -> None:
    r = post(server, path, body)
    assert r.status_code == 422, r.text
    err = r.json()["error"]
    assert err["param"] == field and err["message"].startswith(f"field '{field}': ")
    assert message in err["message"]
    assert_clean(r.text)


def test_unbounded_requests_get_a_4xx_with_a_message(server: dict[str, Any]) -> None:
    """Issue 40: a seed beyond int64 (torch refused 2^64 inside the batch, failing its batch-mates),
    max_tokens 10^9, more labels than `limits.max_labels`, a lone surrogate; through the openai client."""
    import openai
    from openai import OpenAI

    client = OpenAI(base_url=server["url"] + "/v1", api_key=KEYS[0], max_retries=0, timeout=60)
    messages = [{"role": "user", "content": "Severe rash after amoxicillin."}]
    with pytest.raises(openai.UnprocessableEntityError) as seed:
        client.chat.completions.create(model="ral-test", messages=messages, seed=2**64)  # type: ignore[arg-type]
    assert seed.value.body["message"] == ("field 'seed': Input should be less than or equal to "  # type: ignore[index]
                                          "9223372036854775807")
    with pytest.raises(openai.UnprocessableEntityError) as tokens:
        client.chat.completions.create(model="ral-test", messages=messages, max_tokens=10**9)  # type: ignore[arg-type]
    assert tokens.value.body["message"] == "field 'max_tokens': 1000000000 exceeds the limit of 4096"  # type: ignore[index]
    # The openai client cannot even encode it; a raw JSON body can (JSON's \\ud800 escape).
    raw = '{"model": "ral-test", "messages": [{"role": "user", "content": "rash \\ud800"}]}'
    surrogate = post(server, "/v1/chat/completions", None, data=raw.encode("ascii"),
                     headers={"Content-Type": "application/json"})
    assert surrogate.status_code == 400, surrogate.text
    assert surrogate.json()["error"]["message"] == ("field 'messages.0.content': not valid Unicode text (a "
                                                    "lone surrogate \\ud800 at character 5)")
    labels = post(server, "/v1/ral", {"input": "rash", "labels": [str(i) for i in range(65)]})
    assert labels.status_code == 422
    assert labels.json()["error"]["message"] == "field 'labels': 65 labels exceed the limit of 64"
    ok = client.chat.completions.create(model="ral-test", messages=messages, seed=2**63 - 1,  # type: ignore[arg-type]
                                        max_tokens=40)  # within the 300-token context
    assert ok.choices[0].finish_reason in ("stop", "length")


def test_unsupported_chat_parameters_and_unknown_routes(server: dict[str, Any]) -> None:
    """Issue 40: tools / response_format refused with 400 as OpenAI would; FastAPI's 404 in OpenAI's shape;
    a chunked body under the limit still reaches the route whole."""
    import openai
    from openai import OpenAI

    client = OpenAI(base_url=server["url"] + "/v1", api_key=KEYS[0], max_retries=0, timeout=60)
    messages = [{"role": "user", "content": "Severe rash after amoxicillin."}]
    with pytest.raises(openai.BadRequestError) as tools:
        client.chat.completions.create(model="ral-test", messages=messages, tools=[  # type: ignore[arg-type]
            {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}])
    assert tools.value.body["message"].startswith("field 'tools': not supported by this server")  # type: ignore[index]
    with pytest.raises(openai.BadRequestError) as form:
        client.chat.completions.create(model="ral-test", messages=messages,  # type: ignore[arg-type]
                                       response_format={"type": "json_object"})
    assert form.value.body["param"] == "response_format"  # type: ignore[index]
    missing = requests.get(server["url"] + "/v1/nope", headers={"Authorization": f"Bearer {KEYS[0]}"},
                           timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["message"] == "Not Found"
    chunked = post(server, "/v1/ral", None, data=iter([b'{"input": ', b'"rash after aspirin"}']),
                   headers={"Content-Type": "application/json"})  # no Content-Length: streamed
    assert chunked.status_code == 200, chunked.text


def test_404_for_a_model_not_served(server: dict[str, Any]) -> None:
    r = post(server, "/v1/chat/completions",
             {"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]})
    assert r.status_code == 404 and "model 'gpt-4' is not served here" in r.json()["error"]["message"]


def test_413_for_a_body_over_the_limit(server: dict[str, Any]) -> None:
    r = post(server, "/v1/ral", {"input": "x" * 20_000})
    assert r.status_code == 413
    assert r.json()["error"]["message"] == "request body of 20013 bytes exceeds the limit of 16384 bytes"
    chunked = requests.post(server["url"] + "/v1/ral", data=iter([b'{"input": "', b"y" * 20_000, b'"}']),
                            headers={"Authorization": f"Bearer {KEYS[0]}",
                                     "Content-Type": "application/json"},
                            timeout=30)  # no Content-Length: the middleware counts what arrives
    assert chunked.status_code == 413 and "exceeds the limit of 16384 bytes" in chunked.text


def test_400_when_the_prompt_does_not_fit_the_context(server: dict[str, Any]) -> None:
    text = " ".join(["ibuprofen"] * 280)  # fits max_input_chars, not 300 tokens with the template
    r = post(server, "/v1/ral", {"input": text})
    assert r.status_code == 400, r.text
    msg = r.json()["error"]["message"]
    m = re.fullmatch(r"input too long: the prompt has (\d+) tokens after retrieval \((\d) retrieved "
                     r"example\(s\)\); with max_tokens=32 it exceeds the model's context of 300 tokens "
                     r"\(shorten the input by at least (\d+) tokens or ask for a smaller k\)", msg)
    assert m is not None, msg
    n, _hits, short = (int(g) for g in m.groups())
    assert n > 280 and short == n + 32 - 300
    assert_clean(r.text)


def test_overload_gets_429_with_retry_after_never_a_hang(server: dict[str, Any]) -> None:
    started = time.monotonic()
    with ThreadPoolExecutor(24) as pool:
        responses = list(pool.map(lambda i: post(server, "/v1/ral", {"input": f"overload probe {i}"}),
                                  range(24)))
    elapsed = time.monotonic() - started
    codes = [r.status_code for r in responses]
    assert set(codes) == {200, 429}, codes
    assert 8 <= codes.count(200) < 24  # 4 ongoing + 4 queued are admitted at once
    rejected = [r for r in responses if r.status_code == 429]
    assert all(r.headers["Retry-After"] == "2" for r in rejected)
    assert all("Request dropped due to backpressure" in r.text for r in rejected)
    assert elapsed < 30  # rejected at once, not queued until a timeout


def test_app_metrics_are_exported(server: dict[str, Any]) -> None:
    """Serve's own metrics and the app's, on Ray's Prometheus endpoint (exported every few seconds)."""
    post(server, "/v1/ral", {"input": "metrics probe"})
    names = ("ray_biorab_retrieval_latency_ms_bucket", "ray_biorab_generation_latency_ms_bucket",
             "ray_biorab_tokens_total", "ray_biorab_awareness_judgements_total",
             "ray_serve_num_http_requests")
    served = re.compile(r'ray_biorab_requests_total\{[^}]*route="/v1/ral"[^}]*status="200"\} (\d+)')
    deadline, text = time.monotonic() + 90, ""
    while time.monotonic() < deadline:
        text = requests.get(server["metrics"] + "/metrics", timeout=10).text
        if all(n in text for n in names) and served.search(text):
            break
        time.sleep(3)
    assert [n for n in names if n not in text] == []
    found = served.search(text)
    assert found is not None and int(found.group(1)) >= 1
    assert re.search(r'ray_biorab_awareness_judgements_total\{[^}]*judgement="(True|False)"', text)


def test_zz_deleting_the_app_finishes_in_flight_requests(server: dict[str, Any]) -> None:
    """Last in the module (it removes the app): replicas stop only after their in-flight requests are
    answered (graceful_shutdown_timeout_s), and then the route is gone."""
    from ray import serve

    with ThreadPoolExecutor(2) as pool:
        inflight = [pool.submit(post, server, "/v1/ral", {"input": f"in flight {i}"}) for i in range(2)]
        time.sleep(0.15)  # both are inside the 0.2 s fake generation (task answer, then probe)
        serve.delete("ral-test")
        assert [f.result().status_code for f in inflight] == [200, 200]
    assert post(server, "/v1/ral", {"input": "after"}).status_code == 404
