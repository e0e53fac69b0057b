"""API keys: where they come from, and the constant-time check of ``Authorization: Bearer <key>``.

Only SHA-256 digests of the keys travel to the ingress replicas (deployment arguments are stored in Ray's
GCS and shown by ``serve status``); comparing digests with `hmac.compare_digest` keeps the check
constant-time in the key's content.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

from biorab.common.errors import ConfigError

ENV_VAR = "BIORAB_API_KEYS"


def load_keys(api_keys_file: str | None, *, environ: dict[str, str] | None = None) -> list[str]:
    """Keys from ``$BIORAB_API_KEYS`` (comma-separated) and `api_keys_file` (one per line, ``#`` comments)."""
    env = os.environ if environ is None else environ
    keys = [k.strip() for k in env.get(ENV_VAR, "").split(",") if k.strip()]
    if api_keys_file:
        path = Path(api_keys_file).expanduser()
        if not path.is_file():
            raise ConfigError("API keys file not found", key="auth.api_keys_file", path=path)
        lines = path.read_text(encoding="utf-8").splitlines()
        keys += [ln.strip() for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    return keys


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class KeyCheck:
    """Accepts a request whose bearer token is one of the keys behind `digests`."""

    def __init__(self, digests: list[str]) -> None:
        self.digests = [d.encode("ascii") for d in digests]

    def accepts(self, authorization: str | None) -> bool:
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return False
        offered = digest(token.strip()).encode("ascii")
        # Compare against every key (no early exit), so timing says nothing about which one matched.
        matched = False
        for known in self.digests:
            matched |= hmac.compare_digest(offered, known)
        return matched
