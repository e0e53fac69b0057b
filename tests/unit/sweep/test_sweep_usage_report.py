"""The sweep report's token-use and cost table (from each run's summary.json ``usage``)."""

from __future__ import annotations

from biorab.sweep.report import usage_markdown


def test_usage_table_and_sweep_cost() -> None:
    text = usage_markdown({
        "o4-mini": {"prompt_tokens": 1200, "completion_tokens": 5000, "reasoning_tokens": 4000,
                    "cost_usd": 0.0117},
        "qwen": {"prompt_tokens": 10, "completion_tokens": 20, "reasoning_tokens": 0},
    })
    assert "| o4-mini | 1,200 | 5,000 | 4,000 | 0.01 |" in text and "| qwen | 10 | 20 | 0 | - |" in text
    assert "Sweep API cost: $0.01" in text
    assert usage_markdown({}) == ""
