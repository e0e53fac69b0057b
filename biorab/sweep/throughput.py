"""GPU-hours of the generations a sweep still has to compute.

One engine of a model of size S (billions) prefills and decodes at the rates of the sweep's
`ThroughputSpec` (the nearest larger size); an engine spans `tensor_parallel_size` GPUs, so
GPU-hours = (prompt tokens / prefill rate + decode tokens / decode rate) × GPUs per engine / 3600.
Runs record what they really did in ``throughput.json`` (seconds per fresh generation, mean completion
tokens); when a model has such a record, its measured rate replaces the table.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.generation.capabilities import capabilities_of
from biorab.sweep.config import ModelProfile, ThroughputSpec

THROUGHPUT_FILE = "throughput.json"


@dataclass(frozen=True)
class Measured:
    """What earlier runs of a model measured: seconds per fresh generation and completion tokens."""

    seconds_per_generation: float
    mean_completion_tokens: float
    generations: int


def model_size(profile: ModelProfile) -> float | None:
    """The profile's size in billions, or the first ``<n>b`` in the model name (``Llama-2-13b`` → 13)."""
    if profile.size_b is not None:
        return profile.size_b
    found = re.search(r"(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])", profile.model or "")
    return float(found.group(1)) if found else None


def engine_rates(spec: ThroughputSpec, size_b: float | None) -> tuple[float, float]:
    """(prefill, decode) tokens/s of one engine for a model of `size_b` billions (unknown: the largest)."""
    sizes = sorted(spec.per_size)
    chosen = next((s for s in sizes if size_b is not None and size_b <= s), sizes[-1])
    return spec.per_size[chosen]


def gpu_hours(profile: ModelProfile, spec: ThroughputSpec, *, prompt_tokens: int, decode_tokens: int,
              generations: int, measured: Measured | None) -> float:
    """GPU-hours of the given new work (0 for backends that load no weights of ours, ``fake``, ``openai``:
    no `Capabilities.local_weights`)."""
    if not capabilities_of(profile.backend).local_weights:
        return 0.0
    gpus = profile.tensor_parallel_size
    if measured is not None and measured.generations > 0:
        return generations * measured.seconds_per_generation * gpus / 3600.0
    prefill, decode = engine_rates(spec, model_size(profile))
    return (prompt_tokens / prefill + decode_tokens / decode) * gpus / 3600.0


def record_throughput(run_dir: Path, *, model_digest: str, generated: int, wall_s: float,
                      mean_completion_tokens: float) -> None:
    """Add one execution's numbers to ``<run dir>/throughput.json`` (a list of records, append-only):
    fresh generations and wall time of this execution, and the mean completion tokens of the run's freshly
    generated rows (from its predictions, whichever attempt wrote them)."""
    path = run_dir / THROUGHPUT_FILE
    records: list[dict[str, Any]] = json.loads(path.read_text()) if path.is_file() else []
    records.append({"model_digest": model_digest, "generated": generated, "wall_s": round(wall_s, 3),
                    "mean_completion_tokens": round(mean_completion_tokens, 3)})
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")


def read_measured(sweep_dir: Path) -> dict[str, Measured]:
    """Model digest → what the runs under `sweep_dir` measured (executions without fresh generations
    are left out: cache reads say nothing about the engine)."""
    totals: dict[str, list[float]] = {}
    for path in sorted(sweep_dir.glob(f"*/{THROUGHPUT_FILE}")):
        for rec in json.loads(path.read_text()):
            if rec.get("generated", 0) > 0 and "mean_completion_tokens" in rec:  # older records: skipped
                t = totals.setdefault(rec["model_digest"], [0.0, 0.0, 0.0])
                t[0] += rec["wall_s"]
                t[1] += rec["mean_completion_tokens"] * rec["generated"]
                t[2] += rec["generated"]
    return {k: Measured(w / n, c / n, int(n)) for k, (w, c, n) in totals.items()}
