"""`build_app(args) -> Application`: the BioRAB RAL as a Ray Serve application.

    serve run serve/serve_config.yaml          # import_path: serve.app:build_app
    biorab serve [CONFIG.yaml] [--backend fake] # the same app on a local Ray

Three deployments, each with its own replicas, autoscaling and queue limits: ``retriever`` (the testbed
index), ``generator`` (the backend, batched) and ``ingress`` (FastAPI, the RAL core). See docs/serve.md.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from ray.serve import Application

from biorab.config_loading import validate_mapping
from biorab.errors import ConfigError
from biorab.params import Params
from serve.answering import serve_parts
from serve.auth import ENV_VAR, digest, load_keys
from serve.config import DeploymentOptions, GeneratorOptions, ServeConfig, load_serve_config
from serve.generator import Generator
from serve.ingress import Ingress
from serve.method_corpus import method_corpus
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


def key_digests(cfg: ServeConfig) -> list[str] | None:
    """Digests of the accepted API keys (``None`` when auth is disabled); no key at all is an error,
    so that a server never starts open by accident."""
    if not cfg.auth.enabled:
        return None
    keys = load_keys(cfg.auth.api_keys_file)
    if not keys:
        raise ConfigError(f"no API keys: set ${ENV_VAR} (comma-separated) or auth.api_keys_file, "
                          "or auth.enabled: false for a trusted network", key="auth")
    return [digest(k) for k in keys]


def compose(cfg: ServeConfig, digests: list[str] | None, *, control_dir: str | None = None) -> Application:
    """Bind the three deployments with the options of `cfg.deployments`; `control_dir`: the folder through
    which `biorab serve` drains the ingress on SIGTERM/Ctrl-C (`serve.drain`)."""
    d = cfg.deployments
    parts = serve_parts(cfg, method_corpus(cfg))
    retriever = None
    if cfg.retrieval.retrieves:
        retriever = _deployment(Retriever, _behind_ingress(d.retriever)).bind(parts, cache_dir=cfg.cache.dir,
                                                                           hits=cfg.cache.hits)
    generator = _deployment(Generator, _behind_ingress(d.generator, cfg.tensor_parallel_size)).bind(
        cfg.backend.model_dump(mode="json"), adapter=cfg.adapter, tracking_uri=cfg.mlflow_tracking_uri,
        cache_dir=cfg.cache.dir, context_tokens=cfg.limits.context_tokens,
        max_batch_size=d.generator.max_batch_size, batch_wait_timeout_s=d.generator.batch_wait_timeout_s)
    ingress_opts = {**d.ingress.ray_options(),
                    "backpressure_config": {"status_code": 429, "retry_after_s": d.ingress.retry_after_s}}
    app: Application = _deployment(Ingress, ingress_opts).bind(cfg.model_dump(mode="json"), retriever,
                                                               generator, digests, control_dir, parts=parts)
    return app


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
