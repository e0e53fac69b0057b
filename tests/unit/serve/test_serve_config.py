"""The serve config and its pieces without a running Serve: validation errors name file and key, the GPU
(vLLM) path validates without vLLM installed, the Ray Serve config file is what `serve run` expects, API
keys come from the environment and a file and are compared by digest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.common.errors import ConfigError
from serve.auth import KeyCheck, digest, load_keys
from serve.config import SMOKE_CONFIG, EndpointConfig, load_serve_config

REPO = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "serve.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_embedded_default_is_the_cpu_model_with_bm25_over_a_labeled_corpus() -> None:
    cfg = load_serve_config()
    (ral,) = cfg.rals
    assert (cfg.name, ral.name, ral.dataset, ral.backend.name, ral.base_model) == \
        ("biorab-smoke", "biorab-smoke", "ade_corpus_v2", "transformers", "smollm2")
    assert (ral.retrieval.testbed, ral.retrieval.retriever, ral.retrieval.k) == ("labeled", "bm25", 1)
    assert cfg.http.host == "127.0.0.1" and cfg.auth.enabled
    (fake,) = load_serve_config(backend="fake").rals
    assert (fake.backend.name, dict(fake.backend.params)) == ("fake", {"mode": "choice"})


@pytest.mark.parametrize(("text", "key", "message"), [
    ("dataset: ade_corpus_v2\nlimits: {max_body: 10}\n", "limits.max_body", "unknown key"),
    ("dataset: ade_corpus_v2\ndeployments: {generator: {max_batch_size: 0}}\n",
     "deployments.generator.max_batch_size", "greater than or equal to 1"),
    ("dataset: ade_corpus_v2\ndeployments: {generator: {max_batch_size: 64, max_ongoing_requests: 8}}\n",
     "deployments.generator", "batches could never fill"),
    ("dataset: ade_corpus_v2\nbackend: {name: transformers, params: {modle: x}}\n",
     "backend.params.modle", "unknown key"),
    ("dataset: ade_corpus_v2\nretrieval: {testbed: counterfactual}\n", "retrieval", "needs a rate"),
    ("dataset: ade_corpus_v2\nbackend: {name: fake}\nadapter: ./lora\n", "adapter", "takes no adapter"),
    ("retrieval: {testbed: labeled}\n", "dataset", "Field required"),
])
def test_errors_name_the_file_and_the_key(tmp_path: Path, text: str, key: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as err:
        load_serve_config(path)
    assert err.value.key == key and err.value.path == str(path)
    assert message in str(err.value) and str(err.value).startswith(f"{path}, key '{key}': ")


def test_unknown_names_list_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown backend 'vlm'.*Did you mean 'vllm'"):
        load_serve_config(write(tmp_path, "dataset: ade_corpus_v2\nbackend: {name: vlm}\n"))
    with pytest.raises(ConfigError, match=r"unknown template variant of ade_corpus_v2 'bm52'"):
        load_serve_config(write(tmp_path, "dataset: ade_corpus_v2\nretrieval: {testbed: labeled, "
                                          "template: bm52}\n"))


def test_the_gpu_path_validates_without_vllm(tmp_path: Path) -> None:
    """Code and config only here: vLLM is not installed, so nothing is built."""
    cfg = load_serve_config(write(tmp_path, """
dataset: medmcqa
retrieval: {testbed: labeled, retriever: bm25, k: 1}
backend: {name: vllm, params: {model: meta-llama/Llama-3.1-8B-Instruct, tensor_parallel_size: 1,
                               gpu_memory_utilization: 0.9, max_lora_rank: 16}}
adapter: models:/biorab-ral-adapter@best
deployments:
  generator: {num_cpus: 1, num_gpus: 1, max_batch_size: 64, max_ongoing_requests: 128,
              autoscaling: {min_replicas: 1, max_replicas: 4, target_ongoing_requests: 32}}
"""))
    opts = cfg.deployments.generator.ray_options()
    assert opts["ray_actor_options"] == {"num_cpus": 1, "num_gpus": 1}
    assert opts["autoscaling_config"]["max_replicas"] == 4 and "num_replicas" not in opts
    with pytest.raises(ConfigError, match="key 'backend.params.tensor_parallel': unknown key"):
        load_serve_config(write(tmp_path, "dataset: medmcqa\nbackend: {name: vllm, params: "
                                          "{tensor_parallel: 2}}\n"))


def test_a_tensor_parallel_generator_gets_one_gpu_bundle_per_rank(tmp_path: Path) -> None:
    """What Serve receives for the generator of a TP=4 vLLM backend (no GPU needed: the deployment's
    options, as `compose` binds them): four bundles of one GPU per replica, packed on one node, the
    replica's CPU in the first bundle and no GPU on the replica itself."""
    from serve.app import compose

    text = """
dataset: medmcqa
retrieval: {testbed: none, template: noexample}
backend: {name: vllm, params: {model: meta-llama/Llama-3.1-70B-Instruct, tensor_parallel_size: 4}}
auth: {enabled: false}
deployments:
  generator: {num_cpus: 2, autoscaling: {min_replicas: 1, max_replicas: 2}}
"""
    cfg = load_serve_config(write(tmp_path, text))
    generator = _ral(compose(cfg, None))["generator"]._bound_deployment
    replica = generator._replica_config
    assert replica.placement_group_bundles == [{"CPU": 2.0, "GPU": 1.0}, {"GPU": 1.0}, {"GPU": 1.0},
                                               {"GPU": 1.0}]
    assert replica.placement_group_strategy == "STRICT_PACK"
    assert (replica.ray_actor_options["num_cpus"], replica.ray_actor_options["num_gpus"]) == (2.0, 0.0)
    assert generator._deployment_config.autoscaling_config.max_replicas == 2  # bundles are per replica
    one = load_serve_config(write(tmp_path, text.replace("size: 4", "size: 1")))
    single = _ral(compose(one, None))["generator"]._bound_deployment._replica_config
    assert single.placement_group_bundles is None  # TP=1: the replica's own num_gpus, no group
    with pytest.raises(ConfigError, match="num_gpus: leave it 0 with backend.params.tensor_parallel_size 4"):
        load_serve_config(write(tmp_path, text.replace("num_cpus: 2,", "num_cpus: 2, num_gpus: 1,")))


def _ral(app: Any) -> dict[str, Any]:
    """The one RAL the ingress of `app` serves (its bound deployments and config)."""
    (ral,) = app._bound_deployment.init_args[1].values()
    return dict(ral)


def test_serve_config_yaml_is_a_valid_ray_serve_config_bound_to_loopback() -> None:
    from ray.serve.schema import ServeDeploySchema

    raw = yaml.safe_load((REPO / "serve" / "serve_config.yaml").read_text(encoding="utf-8"))
    schema = ServeDeploySchema.model_validate(raw)
    assert schema.http_options.host == "127.0.0.1"
    (app,) = schema.applications
    assert app.import_path == "serve.app:build_app" and app.route_prefix == "/"
    assert (REPO / app.args["config"]).resolve() == SMOKE_CONFIG.resolve()


def test_build_app_composes_three_deployments_and_refuses_to_start_open(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from serve.app import build_app

    monkeypatch.delenv("BIORAB_API_KEYS", raising=False)
    with pytest.raises(ConfigError, match=r"no API keys: set \$BIORAB_API_KEYS"):
        build_app({"backend": "fake"})
    with pytest.raises(ConfigError, match="key 'args.confg': unknown key"):
        build_app({"confg": "x.yaml"})
    monkeypatch.setenv("BIORAB_API_KEYS", "k")
    app = build_app({"backend": "fake", "overrides": {"deployments": {"generator": {"max_batch_size": 4}}}})
    ingress = app._bound_deployment
    assert ingress.name == "ingress" and ingress._deployment_config.max_queued_requests == 256
    config, rals, digests, control_dir = ingress.init_args
    (ral,) = rals.values()
    retriever, generator = ral["retriever"], ral["generator"]
    assert EndpointConfig.model_validate(config).deployments.generator.max_batch_size == 4
    assert (retriever._bound_deployment.name, generator._bound_deployment.name) == ("retriever", "generator")
    assert generator._bound_deployment.init_kwargs["max_batch_size"] == 4
    assert digests == [digest("k")]  # only digests travel to the replicas, never the keys
    assert control_dir is None  # drained through a folder only by `biorab serve`
    bp = ingress._deployment_config.backpressure_config
    assert (bp.status_code, bp.retry_after_s) == (429, 1.0)


def test_keys_come_from_the_environment_and_a_file(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("# team\nfile-key\n\n  spaced-key  \n", encoding="utf-8")
    assert load_keys(str(keys), environ={"BIORAB_API_KEYS": "a, b,,"}) == ["a", "b", "file-key", "spaced-key"]
    assert load_keys(None, environ={}) == []
    with pytest.raises(ConfigError, match="key 'auth.api_keys_file': API keys file not found"):
        load_keys(str(tmp_path / "missing"), environ={})


@pytest.mark.parametrize(("header", "ok"), [
    ("Bearer a", True), ("bearer b", True), ("Bearer  a ", True), ("Bearer c", False), ("Bearer ", False),
    ("Basic a", False), ("a", False), (None, False), ("Bearer ab", False),
])
def test_key_check(header: str | None, ok: bool) -> None:
    assert KeyCheck([digest("a"), digest("b")]).accepts(header) is ok
