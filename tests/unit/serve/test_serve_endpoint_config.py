"""The serve config as an endpoint holding RAL configs: a file's flat form is one RAL, ``rals:`` entries take
what they leave out from the top level, a RAL holds nothing of the endpoint, errors name the file and key,
and the ingress receives the endpoint whole. Expected values are written out by hand from the YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from biorab.common.errors import ConfigError
from biorab.experiment import BackendSpec
from biorab.generation.base import SamplingParams
from biorab.ral.specs.retrieval_spec import RetrievalSpec
from serve.config import EndpointConfig, RALConfig, load_serve_config

#: The fields of each type, written out: a RAL carries no auth, limits or deployments; the endpoint no
#: dataset, retrieval or backend of its own.
RAL_FIELDS = {"name", "dataset", "task", "labels", "data_dir", "seed", "retrieval", "backend", "adapter",
              "sampling", "parser"}
ENDPOINT_FIELDS = {"name", "mlflow_tracking_uri", "cache", "auth", "limits", "http", "ray", "deployments",
                   "max_loaded_adapters", "tracing", "rals", "per_call_adapters"}

SMOLLM2 = BackendSpec(name="transformers", params={"model": "smollm2"})
#: A file's top level that takes an adapter (the fake backend takes none).
TOP = "dataset: ade_corpus_v2\nbackend: {name: transformers, params: {model: smollm2}}\n"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "serve.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_type_holds_only_its_own_fields() -> None:
    assert set(RALConfig.model_fields) == RAL_FIELDS
    assert set(EndpointConfig.model_fields) == ENDPOINT_FIELDS


def test_a_flat_file_is_one_ral_named_by_the_file(tmp_path: Path) -> None:
    cfg = load_serve_config(write(tmp_path, """
name: flat-one
dataset: ade_corpus_v2
seed: 3
retrieval: {testbed: labeled, retriever: bm25, k: 2}
backend: {name: fake, params: {mode: choice}}
sampling: {max_tokens: 5}
parser: strict_original
limits: {max_k: 4}
auth: {enabled: false}
"""))
    assert (cfg.name, cfg.per_call_adapters) == ("flat-one", False)
    assert (cfg.limits.max_k, cfg.auth.enabled) == (4, False)
    assert cfg.rals == (RALConfig(
        name="flat-one", dataset="ade_corpus_v2", seed=3,
        retrieval=RetrievalSpec(testbed="labeled", retriever="bm25", k=2),
        backend=BackendSpec(name="fake", params={"mode": "choice"}), sampling=SamplingParams(max_tokens=5),
        parser="strict_original"),)


def test_rals_entries_take_what_they_leave_out_from_the_top_level(tmp_path: Path) -> None:
    cfg = load_serve_config(write(tmp_path, """
name: endpoint
dataset: ade_corpus_v2
seed: 5
retrieval: {testbed: labeled, retriever: bm25, k: 3, template: bm25}
backend: {name: transformers, params: {model: smollm2}}
sampling: {max_tokens: 9}
rals:
  - {name: a, adapter: /adapters/a}
  - {name: b, retrieval: {testbed: none, template: noexample}}
  - {name: c, backend: {name: fake, params: {mode: choice}}, labels: ["0", "1"]}
"""))
    top: dict[str, Any] = {"dataset": "ade_corpus_v2", "seed": 5, "sampling": SamplingParams(max_tokens=9)}
    labeled = RetrievalSpec(testbed="labeled", retriever="bm25", k=3, template="bm25")
    assert (cfg.name, cfg.per_call_adapters) == ("endpoint", True)
    assert cfg.rals == (
        RALConfig(name="a", adapter="/adapters/a", retrieval=labeled, backend=SMOLLM2, **top),
        # a block an entry gives replaces the top-level one whole: no k=3 or bm25 carried over
        RALConfig(name="b", retrieval=RetrievalSpec(testbed="none", template="noexample"),
                  backend=SMOLLM2, **top),
        RALConfig(name="c", retrieval=labeled, backend=BackendSpec(name="fake", params={"mode": "choice"}),
                  labels=("0", "1"), **top),
    )


@pytest.mark.parametrize(("rals", "key", "message"), [
    ('[{name: a, retrieval: {testbed: counterfactual}}]', "rals.0.retrieval", "needs a rate"),
    ('[{name: a}, {name: b, limits: {max_k: 2}}]', "rals.1.limits", "unknown key"),
    ('[{name: "a b"}]', "rals.0.name", "should match pattern"),
    ('[{name: a}, {name: a}]', None, "rals: names must be unique, got ['a', 'a']"),
    ('[]\nadapter: /adapters/a', None, None),  # no rals: the flat form, its adapter its own
    ('[{name: a}]\nadapter: /adapters/a', None, "adapter: with rals, give each RAL its own adapter"),
])
def test_errors_name_the_file_and_the_key(tmp_path: Path, rals: str, key: str | None,
                                          message: str | None) -> None:
    path = write(tmp_path, f"{TOP}rals: {rals}\n")
    if message is None:
        assert load_serve_config(path).rals[0].adapter == "/adapters/a"
        return
    with pytest.raises(ConfigError) as err:
        load_serve_config(path)
    assert (err.value.key, err.value.path) == (key, str(path))
    # a check of the whole config has no one key: its message names the keys, after the file
    assert message in str(err.value)
    assert str(err.value).startswith(f"{path}, key '{key}': " if key else f"{path}: ")


def test_an_endpoint_holds_one_ral_or_several_switched_per_call() -> None:
    a, b = (RALConfig(name=n, dataset="ade_corpus_v2") for n in ("a", "b"))
    with pytest.raises(ValidationError, match="at least 1 item"):
        EndpointConfig(rals=())
    with pytest.raises(ValidationError, match=r"rals: 2 RALs behind one endpoint switch their adapters per "
                                              r"call \(per_call_adapters: true\)"):
        EndpointConfig(rals=(a, b))
    assert [r.name for r in EndpointConfig(rals=(a, b), per_call_adapters=True).rals] == ["a", "b"]


def _bound(app: Any) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The ingress's endpoint config (as JSON) and its per-RAL handles, as `compose` binds them."""
    config, rals, _digests, _control = app._bound_deployment.init_args
    return config, rals


def test_the_ingress_gets_the_endpoint_whole_and_each_engine_its_adapters(tmp_path: Path) -> None:
    """The endpoint travels to the ingress as one JSON that validates back to the same config; a file
    without ``rals:`` gives its adapter to the engine (merged), a ``rals:`` of one entry switches it per call,
    as before the types were split (they key generations differently)."""
    from serve.app import compose

    base = f"{TOP}auth: {{enabled: false}}\nname: one\n"
    flat = load_serve_config(write(tmp_path, base + "adapter: /adapters/a\n"))
    listed = load_serve_config(write(tmp_path, base + "rals: [{name: one, adapter: /adapters/a}]\n"))
    assert flat.rals == listed.rals and (flat.per_call_adapters, listed.per_call_adapters) == (False, True)
    for cfg, engine_adapter, per_call in ((flat, "/adapters/a", []), (listed, None, ["/adapters/a"])):
        config, rals = _bound(compose(cfg, None))
        assert EndpointConfig.model_validate(config) == cfg
        (ral,) = rals.values()
        assert set(ral) == {"parts", "retriever", "retriever_name", "generator", "generator_name", "adapter"}
        kwargs = ral["generator"]._bound_deployment.init_kwargs
        assert (kwargs["adapter"], kwargs["adapters"], ral["adapter"]) == (engine_adapter, per_call,
                                                                          per_call[0] if per_call else None)
