"""Ray's token auth for every local Ray a command starts: a random token in a ``0600`` file of its own.

Without token auth, anyone who reaches a local Ray's ports runs code as its user: the dashboard agent
(``POST /api/job_agent/jobs/`` on port 52365, on loopback and the node's IP) starts any entrypoint, and the
GCS, raylet and worker gRPC ports (all interfaces) take any call. With ``RAY_AUTH_MODE=token`` Ray 2.60
refuses both without the token (HTTP 401/403, gRPC UNAUTHENTICATED; measured in
tests/integration/test_cli_serve_security.py, docs/serve.md "Security").

Ray finds the token in ``$RAY_AUTH_TOKEN``, else the file ``$RAY_AUTH_TOKEN_PATH``, else
``$HOME/.ray/auth_token``, which a local ``ray.init`` in token mode writes when none exists. So the token is
made here, in a fresh ``0700`` folder (under the run's Ray temp dir), and named by ``RAY_AUTH_TOKEN_PATH``
in this process's environment before ``ray.init``: the Ray processes it starts inherit both variables
(a worker and a job's driver read the file when they start), and nothing is written under ``$HOME``.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path

from biorab.common.errors import ConfigError

MODE = "RAY_AUTH_MODE"
TOKEN = "RAY_AUTH_TOKEN"
TOKEN_PATH = "RAY_AUTH_TOKEN_PATH"
#: The file's name in the folder made for it.
TOKEN_FILE = "auth_token"


def local_ray_token(temp_dir: str | None) -> Path | None:
    """Turn on token auth for the local Ray this process is about to start; returns the token file
    (``None``: auth explicitly off, or the token comes from ``$RAY_AUTH_TOKEN``).

    - ``RAY_AUTH_MODE=disabled`` set by the user: left off (their choice; docs/serve.md says what it opens).
    - A token the user gave (``$RAY_AUTH_TOKEN``, or ``$RAY_AUTH_TOKEN_PATH`` naming a file): used, with
      the mode set to ``token``. A token this function made earlier in this process counts as given, so a
      process that starts several local Rays in turn keeps one token (Ray's token loader caches it).
    - Otherwise a new 32-byte random token in ``<temp_dir>/auth-XXXX/auth_token`` (``0700`` folder,
      ``0600`` file, removed when this process exits).
    """
    mode = os.environ.get(MODE, "").strip().lower()
    if mode == "disabled":
        return None
    path: Path | None = None
    if not os.environ.get(TOKEN):
        given = os.environ.get(TOKEN_PATH)
        if given and not Path(given).is_file():  # Ray would abort on it; say so before it starts
            raise ConfigError(f"${TOKEN_PATH} names no file (Ray's token auth reads the token from it)",
                              path=given)
        path = Path(given) if given else _new_token_file(temp_dir)
        os.environ[TOKEN_PATH] = str(path)
    os.environ[MODE] = "token"
    _refresh_ray_config()
    return path


def _new_token_file(temp_dir: str | None) -> Path:
    if temp_dir:
        Path(temp_dir).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="auth-", dir=temp_dir))  # mkdtemp: mode 0700
    atexit.register(shutil.rmtree, folder, True)
    path = folder / TOKEN_FILE
    # Created with 0600 from the start (never a moment world-readable), and never over an existing file.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(32))
    return path


def _refresh_ray_config() -> None:
    """Make an already imported Ray see the mode and token: its C++ config reads ``RAY_AUTH_MODE`` once
    and its token loader caches the token (Ray's own ``_enable_token_auth`` does the same refresh). A Ray
    not imported yet reads both when it is."""
    if "ray._raylet" not in sys.modules:
        return
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()

