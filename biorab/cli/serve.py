"""`biorab serve [CONFIG.yaml]`: the RAL as an authenticated, OpenAI-compatible Ray Serve app on a local Ray.

Ray and the Serve layer (the top-level `serve` package) are imported only inside the command.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

EXAMPLE_INPUT = "The patient developed a severe rash after starting amoxicillin."
#: The temp dir this command made for its local Ray (removed on stop); None when configured or remote.
_OWN_TEMP: list[str] = []


def serve_command(
    config: Annotated[Path | None, typer.Argument(help="serve config YAML (default: the embedded smoke "
                                                        "config, serve/smoke.yaml)")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="HTTP port")] = None,
    host: Annotated[str | None, typer.Option("--host", help="bind address (default 127.0.0.1)")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="'fake': the deterministic fake backend "
                                                                  "(tests, load benches)")] = None,
) -> None:
    """Serve CONFIG's RAL: /v1/chat/completions, /v1/ral, /v1/retrieve, /v1/models, /healthz, /readyz.

    Stops cleanly on Ctrl-C (in-flight requests finish, exit code 130)."""
    from serve.config import load_serve_config

    http = {k: v for k, v in {"port": port, "host": host}.items() if v is not None}
    cfg = load_serve_config(config, backend=backend, overrides={"http": http} if http else None)
    generated = _session_key(cfg)
    try:
        _start(cfg, generated)
        _banner(cfg, generated)
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        typer.echo("stopping: finishing in-flight requests...", err=True)
        _stop()
        # Not typer.Exit: click returns its code from a non-standalone main instead of exiting with it.
        raise SystemExit(130) from None


def _session_key(cfg: Any) -> str | None:
    """A fresh API key for this session when auth is on and none is configured (never an open server)."""
    from serve.auth import load_keys

    if not cfg.auth.enabled or load_keys(cfg.auth.api_keys_file):
        return None
    return secrets.token_urlsafe(24)


def _start(cfg: Any, session_key: str | None) -> None:
    import ray
    from ray import serve

    from serve.app import compose, key_digests
    from serve.auth import digest

    digests = [digest(session_key)] if session_key else key_digests(cfg)
    if cfg.ray.address:
        ray.init(address=cfg.ray.address, include_dashboard=False)
    else:  # always a new local Ray (never someone else's `ray start`), its files under a short temp dir
        temp = cfg.ray.temp_dir
        if temp is None:
            temp = tempfile.mkdtemp(prefix="biorab-ray-")
            _OWN_TEMP.append(temp)
        ray.init(address="local", num_cpus=cfg.ray.num_cpus, include_dashboard=False,
                 object_store_memory=cfg.ray.object_store_memory, _temp_dir=temp)
    serve.start(http_options={"host": cfg.http.host, "port": cfg.http.port,
                              "request_timeout_s": cfg.http.request_timeout_s})
    serve.run(compose(cfg, digests), name=cfg.name, route_prefix="/", blocking=False)


def _stop() -> None:
    import ray
    from ray import serve

    if ray.is_initialized():
        serve.shutdown()  # replicas get graceful_shutdown_timeout_s to finish what they hold
        ray.shutdown()
    for temp in _OWN_TEMP:  # session logs of a local Ray made for this command only
        shutil.rmtree(temp, ignore_errors=True)


def _banner(cfg: Any, generated: str | None) -> None:
    url = f"http://{cfg.http.host}:{cfg.http.port}"
    key = generated or "$BIORAB_API_KEYS"
    auth = f' -H "Authorization: Bearer {key}"' if cfg.auth.enabled else ""
    body = json.dumps({"model": cfg.name, "messages": [{"role": "user", "content": EXAMPLE_INPUT}]})
    lines = [
        f"BioRAB RAL '{cfg.name}' ready at {url}  (dataset {cfg.dataset}, backend {cfg.backend.name}, "
        f"retrieval {cfg.retrieval.testbed}/{cfg.retrieval.retriever} k={cfg.retrieval.k})",
        *([f"API key for this session (set BIORAB_API_KEYS to choose your own): {generated}"] if generated
          else []),
        "",
        "curl:",
        f"  curl -s {url}/v1/chat/completions{auth} -H 'Content-Type: application/json' -d '{body}'",
        "",
        "openai (Python):",
        "  from openai import OpenAI",
        f"  client = OpenAI(base_url='{url}/v1', api_key='{key if generated else '<your key>'}')",
        f"  r = client.chat.completions.create(model='{cfg.name}', "
        f"messages=[{{'role': 'user', 'content': '{EXAMPLE_INPUT}'}}])",
        "  print(r.choices[0].message.content, r.model_extra['biorab']['evidence'])",
        "",
        "Ctrl-C stops the server.",
    ]
    typer.echo("\n".join(lines), err=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
