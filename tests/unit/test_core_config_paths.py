"""The core helpers: config loading (`ConfigError` naming key and file), strict frozen params, error
messages (file, line, field) and the data/cache locations with their overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from biorab.common.config_loading import load_config, read_yaml
from biorab.common.errors import ConfigError, DataError
from biorab.common.params import Params
from biorab.common.paths import biorab_data_dir, cache_dir


class Inner(Params):
    k: int = 1


class Outer(Params):
    name: str
    inner: Inner = Inner()


def test_load_config_validates_and_names_dotted_key_and_file(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("name: x\ninner: {k: 3}\n", encoding="utf-8")
    assert load_config(Outer, good) == Outer(name="x", inner=Inner(k=3))
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ninner: {kk: 3}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(Outer, bad)
    assert str(info.value) == f"{bad}, key 'inner.kk': unknown key"
    wrong_type = tmp_path / "type.yaml"
    wrong_type.write_text("name: x\ninner: {k: many}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"key 'inner\.k': Input should be a valid integer"):
        load_config(Outer, wrong_type)


@pytest.mark.parametrize(
    ("content", "message"),
    [(None, "file not found"), ("a: [1,\n", "not valid YAML"), ("- 1\n- 2\n", "must be a mapping, got list")],
)
def test_read_yaml_errors_name_the_file(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "c.yaml"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as info:
        read_yaml(path)
    assert str(info.value).startswith(f"{path}: ")


def test_params_are_strict_and_frozen() -> None:
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Outer(name="x", extra=1)  # type: ignore[call-arg]
    outer = Outer(name="x")
    with pytest.raises(ValidationError, match="frozen"):
        outer.name = "y"  # type: ignore[misc]


def test_data_error_message_names_file_line_and_field() -> None:
    error = DataError("missing field", path="d/train.jsonl", line=7, field="label")
    assert str(error) == "d/train.jsonl, line 7, field 'label': missing field"
    assert (error.path, error.line, error.field) == ("d/train.jsonl", 7, "label")
    assert str(DataError("plain")) == "plain"


def test_data_dir_option_env_and_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_DATA_DIR", str(tmp_path))
    assert biorab_data_dir() == tmp_path
    other = tmp_path / "other"
    other.mkdir()
    assert biorab_data_dir(other) == other  # the option wins over the environment
    with pytest.raises(ConfigError, match=r"key '--data-dir': data folder .*missing does not exist"):
        biorab_data_dir(tmp_path / "missing")


def test_cache_dir_override_is_created(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    assert cache_dir() == tmp_path / "cache" and (tmp_path / "cache").is_dir()
    assert cache_dir(tmp_path / "explicit") == tmp_path / "explicit"
