"""The reasoning axes (issue 43 item 5a): ``reasoning_efforts`` and ``thinking_budgets`` expand into runs of
their own with the backend params set per cell, and `biorab plan` lists each as a model with its decode
bound (a thinking budget adds to ``max_tokens``) and says when effort's token cost is unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from biorab.cli.sweep import _print_plan
from biorab.common.errors import ConfigError
from biorab.sweep import expand_cells, expand_runs, load_sweep
from biorab.sweep.cost_estimate import plan_sweep


def _sweep(tmp_path: Path, data_dir: Path, matrix: dict[str, Any],
           models: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "reason.yaml"
    path.write_text(yaml.safe_dump({
        "name": "reason", "output_dir": str(tmp_path / "runs"), "data_dir": str(data_dir),
        "models": models or {
            "fake": {"backend": "fake", "params": {"mode": "choice", "think": "a b c d e f g h i j"}},
            "o4": {"backend": "openai", "model": "o4-mini",
                   "params": {"base_url": "http://127.0.0.1:9/v1", "chat": True}},
        },
        "matrix": matrix, "sampling": {"max_tokens": 8, "temperature": 1.0},
        "tracking": {"enabled": False},
    }), encoding="utf-8")
    return path


MATRIX = {
    "models": ["fake", "o4"], "datasets": [{"name": "ade_corpus_v2", "limit": 4}],
    "reasoning_efforts": [None, "high"], "thinking_budgets": [None, 4],
    # effort is an OpenAI reasoning model's; the budget here is the fake's
    "exclude": [{"model": "fake", "reasoning_effort": "high"}, {"model": "o4", "thinking_budget": 4}],
}


def test_axes_expand_into_runs_with_their_params(tmp_path: Path, data_dir: Path) -> None:
    path = _sweep(tmp_path, data_dir, MATRIX)
    sweep = load_sweep(path)
    cells = expand_cells(sweep, path=path)
    # 2 models × (2 efforts × 2 budgets) minus 2 excluded per model: 4 cells
    assert [(c.model, c.reasoning.effort, c.reasoning.budget) for c in cells] == [
        ("fake", None, None), ("fake", None, 4), ("o4", None, None), ("o4", "high", None)]
    assert cells[1].axes()["thinking_budget"] == 4 and cells[3].axes()["reasoning_effort"] == "high"
    runs = {r.config.name: r for r in expand_runs(sweep, path=path)}
    assert sorted(runs) == ["fake", "fake__think4", "o4", "o4__effort-high"]
    assert runs["fake__think4"].config.backend.params["thinking"] == {"token_budget": 4}
    assert "thinking" not in runs["fake"].config.backend.params
    assert runs["o4__effort-high"].config.backend.params["reasoning_effort"] == "high"
    assert "reasoning_effort" not in runs["o4"].config.backend.params
    assert runs["o4__effort-high"].label == "o4 [effort=high]" and runs["fake"].label == "fake"


def test_effort_on_a_backend_that_cannot_take_it_is_refused(tmp_path: Path, data_dir: Path) -> None:
    path = _sweep(tmp_path, data_dir, {**MATRIX, "exclude": []})
    with pytest.raises(ConfigError, match="profile 'fake': reasoning_efforts apply to the openai backend"):
        expand_runs(load_sweep(path), path=path)
    gpt = {"gpt4o": {"backend": "openai", "model": "gpt-4o", "params": {"base_url": "http://127.0.0.1:9/v1"}}}
    path = _sweep(tmp_path, data_dir, {"models": ["gpt4o"], "datasets": ["ade_corpus_v2"],
                                       "reasoning_efforts": ["low"]}, gpt)
    with pytest.raises(ConfigError, match="'gpt4o' is not an OpenAI reasoning model"):
        expand_runs(load_sweep(path), path=path)
    with pytest.raises(ConfigError, match="at least 1 token"):
        load_sweep(_sweep(tmp_path, data_dir, {"models": ["fake"], "thinking_budgets": [0]}))


def test_plan_lists_each_setting_with_its_decode_bound(tmp_path: Path, data_dir: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))
    path = _sweep(tmp_path, data_dir, MATRIX)
    plan = plan_sweep(load_sweep(path), path=path, check_data=False, list_cells=True)
    assert plan.errors == []
    by = {m.model: m for m in plan.models}
    assert list(by) == ["fake", "fake [budget=4]", "o4", "o4 [effort=high]"]
    assert {m.model: m.cells for m in plan.models} == dict.fromkeys(by, 1)
    # 4 zero-shot rows each; per answer: max_tokens 8, plus the budget of 4 reasoning tokens on the fake
    assert [by[m].new_generations for m in by] == [4, 4, 4, 4]
    assert [by[m].new_decode_tokens for m in by] == [32, 48, 32, 32]
    assert by["o4 [effort=high]"].reasoning_note is not None and by["o4"].reasoning_note is None
    assert {c.run for c in plan.cell_estimates or []} == {"fake", "fake__think4", "o4", "o4__effort-high"}
    _print_plan(plan)
    out = " ".join(capsys.readouterr().out.split())
    assert "fake [budget=4]" in out  # the table's row, not read as markup
    assert ("o4 [effort=high]: reasoning_effort=high: its reasoning tokens are unknown before a run (hidden, "
            "billed as output); the decode bound is max_completion_tokens") in out
