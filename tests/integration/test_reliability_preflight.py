"""`validate` refuses whatever `run` would refuse before computing, with the same key, and `run` refuses
it before writing anything (no run folder, no config.yaml)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.cli_runs import biorab, write_config

# Pinned numbers of the full staged data (not the fixtures in tests/data).
pytestmark = pytest.mark.full_data


def empty_test_split(tmp_path: Path, data_dir: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(data_dir / "semclass", data / "semclass", ignore=shutil.ignore_patterns("raw", "prompts"))
    (data / "semclass" / "sentence_triple_test.jsonl").write_text("", encoding="utf-8")
    return data


CASES = {
    "missing data folder": ({"data_dir": "{tmp}/no-such-data"}, "data_dir",
                            "data folder {tmp}/no-such-data does not exist"),
    "output_dir is a file": ({"output_dir": "{tmp}/blocker"}, "output_dir", "{tmp}/blocker is a file"),
    "openai without key": ({"backend": {"name": "openai", "params": {
        "model": "m", "base_url": "https://api.example.invalid/v1", "api_key_env": "BIORAB_TEST_NO_KEY"}}},
        "backend.params.api_key_env", "$BIORAB_TEST_NO_KEY is not set"),
    "empty test split": ({"data_dir": "EMPTY"}, "datasets.0.split",
                         "split 'test' of 'semclass' has no examples"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_validate_and_run_refuse_alike_before_writing(tmp_path: Path, data_dir: Path, case: str) -> None:
    override, key, words = CASES[case]
    (tmp_path / "blocker").write_text("a file")
    values = {k: (v.format(tmp=tmp_path) if isinstance(v, str) else v) for k, v in override.items()}
    if values.get("data_dir") == "EMPTY":
        values["data_dir"] = str(empty_test_split(tmp_path, data_dir))
    if case != "output_dir is a file":
        values["output_dir"] = str(tmp_path / "runs")
    cfg = write_config(tmp_path, Path(values.pop("data_dir", data_dir)), **values)
    for command in ("validate", "run"):
        out = biorab(command, str(cfg), cache=tmp_path / "cache")
        assert out.returncode == 2, (command, out.stderr)
        line = out.stderr.strip().splitlines()[-1]
        assert line.startswith(f"error: {cfg}, key '{key}': "), (command, line)
        assert words.format(tmp=tmp_path) in line and "--data-dir" not in line, (command, line)
    assert not (tmp_path / "runs").exists()
