"""`biorab serve [CONFIG.yaml]`: the RAL as an authenticated, OpenAI-compatible Ray Serve app on a local Ray.

Ray and the Serve layer (the top-level `serve` package) are imported only inside the command.

SIGTERM (what Kubernetes and `ray stop` send) and Ctrl-C stop it gracefully: the ingress stops admitting
requests (503 with Retry-After), the in-flight ones get `graceful_shutdown_timeout_s` to finish, what is
left is dropped with the local Ray, and one line says how many were drained and dropped. Exit code 143
(SIGTERM) or 130 (Ctrl-C), with no stack dump (Ray's native handler would print one on SIGTERM).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer

from biorab.cli.support.exit_codes import INTERRUPTED

EXAMPLE_INPUT = "The patient developed a severe rash after starting amoxicillin."
#: The temp dir this command made for its local Ray (removed on stop); None when configured or remote.
_OWN_TEMP: list[str] = []
#: Exit codes by signal, as shells report 128 + the signal number.
EXIT_CODES = {signal.SIGINT: INTERRUPTED, signal.SIGTERM: 128 + signal.SIGTERM}


class Stop(Exception):
    """Raised in the main thread by SIGTERM or SIGINT."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise Stop(signum)


def _install_signal_handlers() -> None:
    # After ray.init: Ray's native failure handler (which dumps the stack on SIGTERM) is replaced.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _on_signal)


def serve_command(
    config: Annotated[Path | None, typer.Argument(help="serve config YAML (default: the embedded smoke "
                                                        "config, serve/smoke.yaml)")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="HTTP port")] = None,
    host: Annotated[str | None, typer.Option("--host", help="bind address (default 127.0.0.1)")] = None,
    backend: Annotated[str | None, typer.Option("--backend", help="'fake': the deterministic fake backend "
                                                                  "(tests, load benches)")] = None,
) -> None:
    """Serve CONFIG's RAL: /v1/chat/completions, /v1/ral, /v1/retrieve, /v1/models, /healthz, /readyz.

    Stops gracefully on SIGTERM or Ctrl-C: no new requests, in-flight ones get graceful_shutdown_timeout_s,
    one line says what was drained and dropped; exit code 143 (SIGTERM) or 130 (Ctrl-C)."""
    from serve.config import load_serve_config

    http = {k: v for k, v in {"port": port, "host": host}.items() if v is not None}
    cfg = load_serve_config(config, backend=backend, overrides={"http": http} if http else None)
    generated = _session_key(cfg)
    control = Path(tempfile.mkdtemp(prefix="biorab-serve-control-"))
    signum = int(signal.SIGINT)
    try:
        _install_signal_handlers()
        _start(cfg, generated, control)
        _install_signal_handlers()  # again: ray.init installs its own
        _banner(cfg, generated)
        while True:
            time.sleep(1)
    except Stop as stop:
        signum = stop.signum
    except KeyboardInterrupt:  # raised by a handler Ray installed (defensive: ours replace it)
        pass
    except BaseException:  # a failed start: its error is the message; the control folder goes
        shutil.rmtree(control, ignore_errors=True)
        raise
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the account short
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    typer.echo(_shutdown(cfg, control, signal.Signals(signum).name), err=True)
    # Not typer.Exit: click returns its code from a non-standalone main instead of exiting with it.
    raise SystemExit(EXIT_CODES[signal.Signals(signum)])


def _session_key(cfg: Any) -> str | None:
    """A fresh API key for this session when auth is on and none is configured (never an open server)."""
    from serve.auth import load_keys

    if not cfg.auth.enabled or load_keys(cfg.auth.api_keys_file):
        return None
    return secrets.token_urlsafe(24)


def _start(cfg: Any, session_key: str | None, control: Path) -> None:
    from ray import serve

    from pipelines.ray_setup import start_ray
    from serve.app import compose, key_digests
    from serve.auth import ENV_VAR, digest

    digests = [digest(session_key)] if session_key else key_digests(cfg)
    # The plaintext keys stay in this process: a local Ray's processes (replicas, and any code a job runs
    # there) inherit this environment, and only the digests are theirs to know.
    os.environ.pop(ENV_VAR, None)
    settings = cfg.ray
    if not cfg.ray.address and cfg.ray.temp_dir is None:  # a local Ray's files under a temp dir of its own
        temp = tempfile.mkdtemp(prefix="biorab-ray-")
        _OWN_TEMP.append(temp)
        settings = cfg.ray.model_copy(update={"temp_dir": temp})
    start_ray(settings, fresh=True)  # a new local Ray, never someone else's `ray start`
    serve.start(http_options={"host": cfg.http.host, "port": cfg.http.port,
                              "request_timeout_s": cfg.http.request_timeout_s})
    local = None if cfg.ray.address else str(control)  # a remote cluster's replicas cannot see the folder
    serve.run(compose(cfg, digests, control_dir=local), name=cfg.name, route_prefix="/", blocking=False)


def _shutdown(cfg: Any, control: Path, name: str) -> str:
    """Drain, stop Serve and Ray, and say in one line what happened to the in-flight requests."""
    from serve.drain import drain, final_account

    budget = cfg.deployments.ingress.graceful_shutdown_timeout_s
    started = time.monotonic()
    account = drain(control, budget) if not cfg.ray.address else None
    _stop(graceful=account is None)
    if account is not None:  # what finished while Ray stopped counts as finished, not dropped
        account = final_account(control)
    shutil.rmtree(control, ignore_errors=True)
    took = time.monotonic() - started
    if account is None:
        return f"biorab serve: stopped on {name} in {took:.1f} s (remote cluster: Serve's own graceful stop)"
    return (f"biorab serve: stopped on {name} in {took:.1f} s: {account.drained} in-flight request(s) "
            f"finished, {account.dropped} dropped after graceful_shutdown_timeout_s={budget:g}, "
            f"{account.refused} refused while stopping")


def _stop(*, graceful: bool) -> None:
    import ray
    from ray import serve

    if ray.is_initialized():
        if graceful:  # replicas get graceful_shutdown_timeout_s to finish what they hold
            serve.shutdown()
        ray.shutdown()  # the local Ray ends with this command: its replicas (and what they still hold) too
    for temp in _OWN_TEMP:  # session logs of a local Ray made for this command only
        shutil.rmtree(temp, ignore_errors=True)


def _banner(cfg: Any, generated: str | None) -> None:
    url = f"http://{cfg.http.host}:{cfg.http.port}"
    key = generated or "$BIORAB_API_KEYS"
    auth = f' -H "Authorization: Bearer {key}"' if cfg.auth.enabled else ""
    rals = cfg.rals  # several RALs (`rals:`): the examples ask the first, by its name
    first = rals[0]
    body = json.dumps({"model": first.name, "messages": [{"role": "user", "content": EXAMPLE_INPUT}]})
    lines = [
        f"BioRAB RAL '{first.name}' ready at {url}  (dataset {first.dataset}, backend {first.backend.name}, "
        f"retrieval {first.retrieval.testbed}/{first.retrieval.retriever} k={first.retrieval.k})",
        *([f"{len(rals)} RALs behind this endpoint (the request's model): "
           + ", ".join(r.name for r in rals)] if len(rals) > 1 else []),
        *([f"API key for this session (set BIORAB_API_KEYS to choose your own): {generated}"] if generated
          else []),
        "",
        "curl:",
        f"  curl -s {url}/v1/chat/completions{auth} -H 'Content-Type: application/json' -d '{body}'",
        "",
        "openai (Python):",
        "  from openai import OpenAI",
        f"  client = OpenAI(base_url='{url}/v1', api_key='{key if generated else '<your key>'}')",
        f"  r = client.chat.completions.create(model='{first.name}', "
        f"messages=[{{'role': 'user', 'content': '{EXAMPLE_INPUT}'}}])",
        "  print(r.choices[0].message.content, r.model_extra['biorab']['evidence'])",
        "",
        "Ctrl-C (or SIGTERM) stops the server.",
    ]
    typer.echo("\n".join(lines), err=False)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
