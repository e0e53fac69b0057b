"""Token use and cost per cell, from the cell's consolidated predictions file: prompt, completion and
reasoning tokens, the finish reasons, and (with a ``price`` in the openai backend's params) the cost in US
dollars. Rows served from the generation cache count too: the totals are what the cell's answers cost to
make, whichever run made them (``fresh_*`` counts only this run's)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from biorab.experiment import ExperimentConfig
from biorab.generation.capabilities import capabilities_of
from biorab.ral.specs.cell_records import CellResult

_COLUMNS = ["gen_prompt_tokens", "gen_completion_tokens", "gen_reasoning_tokens", "gen_finish_reason",
            "gen_cached", "gen_error"]


def cell_usage(path: Any) -> dict[str, Any]:
    """``{"prompt_tokens", "completion_tokens", "reasoning_tokens", "fresh_prompt_tokens",
    "fresh_completion_tokens", "finish_reasons": {reason: rows}}`` of one predictions file."""
    import pyarrow.parquet as pq

    names = set(pq.read_schema(path).names)
    table = pq.read_table(path, columns=[c for c in _COLUMNS if c in names]).to_pylist()
    totals = Counter[str]()
    reasons = Counter[str]()
    for row in table:
        prompt = int(row.get("gen_prompt_tokens") or 0)
        completion = int(row.get("gen_completion_tokens") or 0)
        totals["prompt_tokens"] += prompt
        totals["completion_tokens"] += completion
        totals["reasoning_tokens"] += int(row.get("gen_reasoning_tokens") or 0)
        if not row.get("gen_cached"):
            totals["fresh_prompt_tokens"] += prompt
            totals["fresh_completion_tokens"] += completion
        reasons["error" if row.get("gen_error") is not None else str(row.get("gen_finish_reason"))] += 1
    keys = ("prompt_tokens", "completion_tokens", "reasoning_tokens", "fresh_prompt_tokens",
            "fresh_completion_tokens")
    return {**{k: totals[k] for k in keys}, "finish_reasons": dict(sorted(reasons.items()))}


def add_usage(results: list[CellResult], config: ExperimentConfig) -> dict[str, Any]:
    """Each result's ``usage`` (with ``cost_usd`` when the config has a price); returns the run's totals."""
    price = _price(config)
    run: Counter[str] = Counter()
    cost = 0.0
    for result in results:
        if not result.predictions_path.is_file():
            continue
        usage = cell_usage(result.predictions_path)
        if price is not None:
            usage["cost_usd"] = round(price.cost(usage["prompt_tokens"], usage["completion_tokens"]), 6)
            usage["fresh_cost_usd"] = round(price.cost(usage["fresh_prompt_tokens"],
                                                       usage["fresh_completion_tokens"]), 6)
            cost += usage["cost_usd"]
        result.extra["usage"] = usage
        run.update({k: v for k, v in usage.items() if k.endswith("_tokens")})
    totals: dict[str, Any] = dict(run)
    if price is not None:
        totals["cost_usd"] = round(cost, 6)
        totals["price"] = price.model_dump()
    return totals


def _price(config: ExperimentConfig) -> Any:
    if not capabilities_of(config.backend.name).server_client or not config.backend.params.get("price"):
        return None
    from biorab.generation.openai.params import Price

    return Price.model_validate(config.backend.params["price"])
