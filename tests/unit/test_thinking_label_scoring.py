"""Label scoring on a thinking model is refused with a config error naming ``sampling.score_labels``: the
labels' log-probs would be read right after the prompt, where the model first writes its reasoning (the
choice lm-evaluation-harness makes too). Without thinking, or without label scoring, the config passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.common.errors import ConfigError
from biorab.runner.checks.validate import load_experiment


def _write(tmp_path: Path, backend: str, sampling: str) -> Path:
    path = tmp_path / "think.yaml"
    path.write_text(f"name: think\ndatasets: [{{name: ade_corpus_v2, limit: 2}}]\nbackend: {backend}\n"
                    f"sampling: {sampling}\n", "utf-8")
    return path


@pytest.mark.parametrize(
    "backend",
    [
        "{name: fake, params: {thinking: {split: true}}}",
        "{name: fake, params: {thinking: {token_budget: 32}}}",
        "{name: transformers, params: {model: smollm2, thinking: {split: true}}}",
        "{name: openai, params: {model: m, base_url: 'http://127.0.0.1:1/v1', think_split: true}}",
        "{name: openai, params: {model: m, base_url: 'http://127.0.0.1:1/v1', thinking_token_budget: 64}}",
        # an OpenAI reasoning model (by name): it reasons before it answers
        "{name: openai, params: {model: o3-mini-2025-01-31, chat: true}}",
    ],
)
def test_label_scoring_on_a_thinking_model_is_refused(tmp_path: Path, backend: str) -> None:
    path = _write(tmp_path, backend, "{score_labels: true, temperature: 1.0}" if "o3" in backend
                  else "{score_labels: true}")
    with pytest.raises(ConfigError, match="skipping|where the model would first write its reasoning") as e:
        load_experiment(path, check_data=False)
    assert e.value.key == "sampling.score_labels" and str(path) in str(e.value)


@pytest.mark.parametrize(
    ("backend", "sampling"),
    [
        ("{name: fake, params: {thinking: {split: true}}}", "{score_labels: false}"),
        ("{name: fake}", "{score_labels: true}"),
        ("{name: openai, params: {model: gpt-4o, base_url: 'http://127.0.0.1:1/v1', label_scoring: echo}}",
         "{score_labels: true}"),
    ],
)
def test_without_thinking_or_without_scoring_the_config_passes(tmp_path: Path, backend: str,
                                                               sampling: str) -> None:
    load_experiment(_write(tmp_path, backend, sampling), check_data=False)


def test_echo_label_scoring_through_a_server_is_warned_about(tmp_path: Path) -> None:
    from biorab.runner.checks.validate import config_warnings

    echo = "{name: openai, params: {model: m, base_url: 'http://127.0.0.1:1/v1', label_scoring: echo}}"
    scored = load_experiment(_write(tmp_path, echo, "{score_labels: true}"), check_data=False)
    (note,) = config_warnings(scored)
    assert "not comparable with the in-process engines'" in note and "9.39 nats" in note
    assert config_warnings(load_experiment(_write(tmp_path, echo, "{score_labels: false}"),
                                           check_data=False)) == []
    assert config_warnings(load_experiment(_write(tmp_path, "{name: fake}", "{score_labels: true}"),
                                           check_data=False)) == []


def test_biorab_validate_prints_the_warning(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from biorab.cli.main import app

    echo = "{name: openai, params: {model: m, base_url: 'http://127.0.0.1:1/v1', label_scoring: echo}}"
    path = _write(tmp_path, echo, "{score_labels: true}")
    out = CliRunner().invoke(app, ["validate", str(path), "--skip-data", "--skip-tracking"])
    assert out.exit_code == 0, out.output
    assert "warning: label log-probs through backend openai (label_scoring: echo)" in out.output
