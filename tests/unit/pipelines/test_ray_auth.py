"""`local_ray_token`: the token every local Ray of `biorab` starts with (the real Ray refusing calls without
it: tests/integration/test_cli_serve_security.py)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError
from pipelines.ray_auth import local_ray_token


@pytest.fixture(autouse=True)
def bare(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)


def test_a_new_token_is_a_0600_file_in_a_0700_folder_of_the_temp_dir(tmp_path: Path) -> None:
    path = local_ray_token(str(tmp_path / "ray"))
    assert path is not None and path.parent.parent == tmp_path / "ray" and path.name == "auth_token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    token = path.read_text(encoding="ascii")
    assert len(token) == 64 and int(token, 16) >= 0  # 32 random bytes, hex
    assert os.environ["RAY_AUTH_MODE"] == "token" and os.environ["RAY_AUTH_TOKEN_PATH"] == str(path)
    # A second local Ray of the same process keeps the token (Ray's loader has it cached).
    assert local_ray_token(str(tmp_path / "other")) == path
    assert not (tmp_path / "other").exists() or not list((tmp_path / "other").iterdir())


def test_two_processes_get_different_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = local_ray_token(str(tmp_path))
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH")
    second = local_ray_token(str(tmp_path))
    assert first != second and first is not None and second is not None
    assert first.read_text(encoding="ascii") != second.read_text(encoding="ascii")


def test_the_users_choices_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    assert local_ray_token(str(tmp_path)) is None and "RAY_AUTH_TOKEN_PATH" not in os.environ
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", "from-the-user")
    assert local_ray_token(str(tmp_path)) is None and "RAY_AUTH_TOKEN_PATH" not in os.environ
    monkeypatch.delenv("RAY_AUTH_TOKEN")
    mine = tmp_path / "mine"
    mine.write_text("abc", encoding="ascii")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(mine))
    assert local_ray_token(str(tmp_path)) == mine


def test_a_token_path_naming_no_file_is_an_error_before_ray_aborts(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"missing: \$RAY_AUTH_TOKEN_PATH names no file"):
        local_ray_token(str(tmp_path))
