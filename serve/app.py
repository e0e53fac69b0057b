"""`build_app(args) -> Application`: the BioRAB RAL as a Ray Serve application.

    serve run serve/serve_config.yaml          # import_path: serve.app:build_app
    biorab serve [CONFIG.yaml] [--backend fake] # the same app on a local Ray

Three deployments, each with its own replicas, autoscaling and queue limits: ``retriever`` (the testbed
index), ``generator`` (the backend, batched) and ``ingress`` (FastAPI, the RAL core). See docs/serve.md.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import Field
from ray.serve import Application

from biorab.common.config_loading import validate_mapping
from biorab.common.errors import ConfigError
from biorab.common.params import Params
from serve.answering import serve_parts
from serve.auth import ENV_VAR, digest, load_keys
from serve.config import DeploymentOptions, EndpointConfig, GeneratorOptions, RALConfig, load_serve_config
from serve.generator import Generator
from serve.ingress import Ingress
from serve.retriever import Retriever


class BuildArgs(Params):
    """The ``args:`` of an application in serve_config.yaml.

    Attributes:
        config: a BioRAB serve config (``None``: the embedded default, serve/smoke.yaml).
        backend: ``fake`` for the deterministic fake backend (tests, load benches).
        overrides: nested keys merged over the config file (``{"limits": {"max_k": 4}}``).
    """

    config: str | None = None
    backend: str | None = None
    overrides: dict[str, Any] = Field(default_factory=dict)


def build_app(args: dict[str, Any] | None = None) -> Application:
    """The application for `args` (see `BuildArgs`); a bad config raises `ConfigError` naming the key."""
    parsed = validate_mapping(BuildArgs, dict(args or {}), key_prefix="args")
    cfg = load_serve_config(parsed.config, backend=parsed.backend, overrides=parsed.overrides)
    return compose(cfg, key_digests(cfg))


def key_digests(cfg: EndpointConfig) -> list[str] | None:
    """Digests of the accepted API keys (``None`` when auth is disabled); no key at all is an error,
    so that a server never starts open by accident."""
    if not cfg.auth.enabled:
        return None
    keys = load_keys(cfg.auth.api_keys_file)
    if not keys:
        raise ConfigError(f"no API keys: set ${ENV_VAR} (comma-separated) or auth.api_keys_file, "
                          "or auth.enabled: false for a trusted network", key="auth")
    return [digest(k) for k in keys]


def compose(cfg: EndpointConfig, digests: list[str] | None, *, control_dir: str | None = None
            ) -> Application:
    """Bind the deployments with the options of `cfg.deployments`: for each served RAL (`cfg.rals`)
    its retriever and generator, shared by RALs that would build the same one (same corpus and retrieval
    setting; same backend block: one engine whose adapters are switched per call), and one ingress.
    `control_dir`: the folder through which `biorab serve` drains the ingress on SIGTERM/Ctrl-C
    (`serve.drain`). Deployment names: ``retriever``, ``generator`` for the first, ``-2``, ``-3``... after."""
    d = cfg.deployments
    per_call = cfg.per_call_adapters
    generators: dict[str, tuple[str, Any]] = {}
    for n, (key, group) in enumerate(_engines(cfg.rals).items()):
        name = _numbered("generator", n)
        # one RAL: its adapter is the replica's own (merged on transformers); `rals:`: switched per call
        adapters = list(dict.fromkeys(one.adapter for one in group if one.adapter is not None and per_call))
        first = group[0]
        generators[key] = (name, _deployment(Generator, {
            **_behind_ingress(d.generator, first.tensor_parallel_size), "name": name}).bind(
            first.backend.model_dump(mode="json"), adapter=None if per_call else first.adapter,
            adapters=adapters, max_loaded_adapters=cfg.max_loaded_adapters,
            tracking_uri=cfg.mlflow_tracking_uri, cache_dir=cfg.cache.dir,
            context_tokens=cfg.limits.context_tokens, max_batch_size=d.generator.max_batch_size,
            batch_wait_timeout_s=d.generator.batch_wait_timeout_s))
    retrievers: dict[str, tuple[str, Any]] = {}
    rals: dict[str, dict[str, Any]] = {}
    for one in cfg.rals:
        parts = serve_parts(one, cfg.cache.dir)
        retriever_name, retriever = None, None
        if one.retrieval.retrieves:
            key = _retrieval_key(one)
            if key not in retrievers:
                name = _numbered("retriever", len(retrievers))
                options = {**_behind_ingress(d.retriever), "name": name}
                retrievers[key] = (name, _deployment(Retriever, options).bind(parts, cache_dir=cfg.cache.dir,
                                                                              hits=cfg.cache.hits))
            retriever_name, retriever = retrievers[key]
        generator_name, generator = generators[_key(one.backend.model_dump(mode="json"))]  # _engines' key
        rals[one.name] = {"parts": parts, "retriever": retriever, "retriever_name": retriever_name,
                          "generator": generator, "generator_name": generator_name,
                          "adapter": one.adapter if per_call else None}
    ingress_opts = {**d.ingress.ray_options(),
                    "backpressure_config": {"status_code": 429, "retry_after_s": d.ingress.retry_after_s}}
    app: Application = _deployment(Ingress, ingress_opts).bind(cfg.model_dump(mode="json"), rals, digests,
                                                               control_dir)
    return app


def ray_serve_config(cfg: EndpointConfig, config_path: str, *, overrides: dict[str, Any] | None = None,
                     proxy_location: str = "HeadOnly", runtime_env: dict[str, Any] | None = None
                     ) -> dict[str, Any]:
    """The Ray Serve config file (`serve deploy`, a KubeRay RayService's ``serveConfigV2``) that runs
    `cfg` (`config_path` with `overrides`, where the config lies on the cluster): the HTTP options and,
    per deployment of `compose`, the options `cfg.deployments` gives it (replicas or autoscaling, queue
    bounds, resources), so that an operator sees them where Ray reads them; the same `overrides` go to
    `build_app`, so the ingress's admission bounds (`serve.admission`) agree with them. Validated by Ray's
    own ``ray.serve.schema.ServeDeploySchema`` in the tests."""
    d = cfg.deployments
    deployments: list[dict[str, Any]] = [{
        "name": "ingress", **d.ingress.ray_options(),
        "backpressure_config": {"status_code": 429, "retry_after_s": d.ingress.retry_after_s}}]
    retrievals = list(dict.fromkeys(_retrieval_key(one) for one in cfg.rals if one.retrieval.retrieves))
    deployments += [{**_behind_ingress(d.retriever), "name": _numbered("retriever", n)}
                     for n in range(len(retrievals))]
    deployments += [{**_behind_ingress(d.generator, group[0].tensor_parallel_size),
                     "name": _numbered("generator", n)}
                    for n, group in enumerate(_engines(cfg.rals).values())]
    args: dict[str, Any] = {"config": config_path, **({"overrides": overrides} if overrides else {})}
    return {"proxy_location": proxy_location,
            "http_options": {"host": cfg.http.host, "port": cfg.http.port,
                             **({"request_timeout_s": cfg.http.request_timeout_s}
                                if cfg.http.request_timeout_s is not None else {})},
            "applications": [{"name": cfg.name, "route_prefix": "/", "import_path": "serve.app:build_app",
                              "args": args, **({"runtime_env": runtime_env} if runtime_env else {}),
                              "deployments": deployments}]}


def _engines(rals: Sequence[RALConfig]) -> dict[str, list[RALConfig]]:
    """The RALs by backend block: each group shares one generator deployment (one engine)."""
    engines: dict[str, list[RALConfig]] = {}
    for one in rals:
        engines.setdefault(_key(one.backend.model_dump(mode="json")), []).append(one)
    return engines


def _retrieval_key(one: RALConfig) -> str:
    """What a retriever deployment is built from: RALs with the same key share one."""
    return _key([one.dataset, one.task, one.labels, one.data_dir, one.seed, one.parser,
                 one.retrieval.model_dump(mode="json")])


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _numbered(name: str, n: int) -> str:
    return name if n == 0 else f"{name}-{n + 1}"


def _behind_ingress(options: DeploymentOptions, tensor_parallel_size: int = 1) -> dict[str, Any]:
    """Options of a deployment the ingress calls: its bounded queue is the ingress's exact admission
    (`serve.admission`), so Serve's own queue bound is that whole room (it then never refuses first: its
    count also holds calls still being routed, which refused bursts at idle replicas)."""
    opts = (options.ray_options(tensor_parallel_size) if isinstance(options, GeneratorOptions)
            else options.ray_options())
    limit = options.admission_limit
    opts["max_queued_requests"] = -1 if limit is None else limit
    return opts


def _deployment(deployment: Any, options: dict[str, Any]) -> Any:
    # `serve.deployment` returns a Deployment, but mypy sees the decorated class.
    return deployment.options(**options)
