"""Load on the served RAL (Ray Serve, 127.0.0.1 only), side by side with the RAL core called directly.

For each concurrency level, a bounded number of `/v1/ral` requests (ADE-corpus-v2 test instances, BM25
k=1 over the labeled corpus) are sent by an aiohttp client: closed-loop (that many in flight) or, with
``--open-rate R``, open-loop (R requests/s arrive whatever the answers, at most the level in flight). It
prints p50/p95/p99 latency of the 200s, throughput, and counts by status (429/503 must carry Retry-After;
``timeout``: the client gave up). ``--burst 64`` then sends 64 requests at once with 30 s client timeouts
(sent as ``X-Stainless-Read-Timeout``, as the openai client does) and times, from the burst's last
answer, a new request's first 200.

- ``--backend fake``: the plumbing. Also times the RAL core called directly in this process on the same
  instances (one at a time) and prints Serve's overhead per request: served latency at concurrency 1 over
  the direct latency, and the difference in ms. Target: 0 errors at 256 concurrent requests.
- ``--backend transformers`` (the CPU model): also times the bare backend's batched `generate` on the same
  rendered prompts (batches of the generator's max_batch_size, before and after the served runs) and prints
  served/bare throughput at each concurrency >= the batch size, with the generator's mean batch size.
  Target: >= 0.8 (batching must really batch).

    python bench/serve_load.py --backend fake
    python bench/serve_load.py --backend transformers
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import tempfile
import time
from dataclasses import dataclass
from typing import Any

KEY = "bench-key"
APP = "bench"
RAY_TEMP = tempfile.mkdtemp(prefix="rb-", dir="/tmp")  # short: Ray's unix socket paths are limited


@dataclass
class Level:
    concurrency: int
    latencies_ms: list[float]
    errors: int
    wall_s: float
    completion_tokens: int = 0
    statuses: dict[str, int] | None = None

    def pct(self, q: float) -> float:
        xs = sorted(self.latencies_ms)
        return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))] if xs else float("nan")

    @property
    def throughput(self) -> float:
        return (len(self.latencies_ms) + self.errors) / self.wall_s

    def line(self) -> str:
        n = len(self.latencies_ms) + self.errors
        counts = " ".join(f"{k}:{v}" for k, v in sorted((self.statuses or {}).items()))
        return (f"  c={self.concurrency:<4} n={n:<5} p50={self.pct(50):8.1f} ms "
                f"p95={self.pct(95):8.1f} ms p99={self.pct(99):8.1f} ms  {self.throughput:7.2f} req/s  "
                f"non-200={self.errors}  statuses {counts}")


async def load(url: str, bodies: list[dict[str, Any]], concurrency: int, *, timeout_s: float = 600,
               open_rate: float | None = None) -> Level:
    """Closed loop (`concurrency` in flight), or open loop at `open_rate` requests/s (capped at
    `concurrency` in flight, so the load stays bounded). Statuses ``429``/``503`` without Retry-After are
    counted as ``<code>-no-retry-after``."""
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    tokens = 0
    headers = {"Authorization": f"Bearer {KEY}", "X-Stainless-Read-Timeout": str(timeout_s)}
    limits = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(connector=limits, timeout=timeout, headers=headers) as session:

        async def one(body: dict[str, Any], delay: float) -> None:
            nonlocal tokens
            await asyncio.sleep(delay)
            async with sem:
                started = time.perf_counter()
                try:
                    async with session.post(url + "/v1/ral", json=body) as resp:
                        data = await resp.read()
                        status = str(resp.status)
                        if resp.status in (429, 503) and "Retry-After" not in resp.headers:
                            status += "-no-retry-after"
                        if resp.status == 200:
                            tokens += json.loads(data)["generation"]["completion_tokens"]
                            latencies.append((time.perf_counter() - started) * 1000)
                except TimeoutError:
                    status = "timeout"
                except aiohttp.ClientError as e:
                    status = type(e).__name__
                statuses[status] = statuses.get(status, 0) + 1

        started = time.perf_counter()
        gap = 0.0 if open_rate is None else 1.0 / open_rate
        await asyncio.gather(*(one(b, i * gap) for i, b in enumerate(bodies)))
        wall = time.perf_counter() - started
    errors = sum(v for k, v in statuses.items() if k != "200")
    return Level(concurrency, latencies, errors, wall, tokens, statuses)


def burst_recovery(url: str, bodies: list[dict[str, Any]], size: int = 64, timeout_s: float = 30
                   ) -> tuple[Level, float]:
    """`size` requests at once with `timeout_s` client timeouts; then seconds from the burst's last answer
    to a new request's first 200 (new requests one after another, each with the same timeout)."""
    burst = asyncio.run(load(url, bodies[:size], size, timeout_s=timeout_s))
    ended = time.perf_counter()
    for _ in range(10):
        probe = asyncio.run(load(url, bodies[:1], 1, timeout_s=timeout_s))
        if probe.statuses == {"200": 1}:
            return burst, time.perf_counter() - ended
        time.sleep(0.5)
    return burst, float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def instances(n: int, data_dir: str | None) -> list[Any]:
    from biorab.datasets import load_dataset

    test = load_dataset("ade_corpus_v2", "test", data_dir=data_dir)
    return [test[i % len(test)] for i in range(n)]


def bodies_of(examples: list[Any]) -> list[dict[str, Any]]:
    return [{"input": ex.text, "fields": ex.fields, "id": f"{ex.id}:{i}"} for i, ex in enumerate(examples)]


def direct_latency_ms(one: Any, examples: list[Any]) -> float:
    """The RAL core in this process, one instance at a time (the served path's work without Serve);
    `one`: the served RAL's `serve.config.RALConfig`."""
    from biorab.generation import build_backend
    from biorab.ral import build_ral

    backend = build_backend(one.backend.name, one.backend.params)
    ral = build_ral(dataset=one.dataset, retrieval=one.retrieval, backend=backend, sampling=one.sampling,
                    parser=one.parser, seed=one.seed, data_dir=one.data_dir)
    ral.answer_one(examples[0])  # warm: index, template
    times = []
    for ex in examples:
        started = time.perf_counter()
        ral.answer_one(ex)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def rendered_prompts(one: Any, examples: list[Any]) -> list[Any]:
    """The prompts the server renders for these instances (retrieval included), for the bare backend;
    `one`: the served RAL's `serve.config.RALConfig`."""
    from biorab.generation import build_backend
    from biorab.ral import build_ral

    ral = build_ral(dataset=one.dataset, retrieval=one.retrieval, backend=build_backend("fake"),
                    sampling=one.sampling, parser=one.parser, seed=one.seed, data_dir=one.data_dir)
    retrieved = ral.retrieve(examples)
    return [ral.render(ex, r.hits) for ex, r in zip(examples, retrieved, strict=True)]


def bare_throughput(one: Any, prompts: list[Any], batch: int, backend: Any) -> tuple[float, float]:
    """Prompts and completion tokens per second of the bare backend's `generate` on batches of `batch`
    (after one warm batch) with the sampling of `one` (the served RAL's `serve.config.RALConfig`)."""
    backend.generate(prompts[:batch], one.sampling)
    started, tokens = time.perf_counter(), 0
    for i in range(0, len(prompts), batch):
        tokens += sum(g.completion_tokens for g in backend.generate(prompts[i:i + batch], one.sampling))
    wall = time.perf_counter() - started
    return len(prompts) / wall, tokens / wall


def start(cfg: Any, port: int) -> None:
    import ray
    from ray import serve

    from pipelines.ray_auth import local_ray_token
    from serve.app import compose, key_digests

    os.environ["BIORAB_API_KEYS"] = KEY
    local_ray_token(RAY_TEMP)  # token auth, as every local Ray of `biorab`
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=500_000_000,
             _temp_dir=RAY_TEMP, log_to_driver=False,
             logging_level="WARNING")
    serve.start(http_options={"host": "127.0.0.1", "port": port}, logging_config={"enable_access_log": False})
    serve.run(compose(cfg, key_digests(cfg)), name=APP, route_prefix="/")


def batch_sizes() -> list[int]:
    from ray import serve

    return list(serve.get_deployment_handle("generator", APP).batch_stats.remote().result())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=["fake", "transformers"], default="fake")
    ap.add_argument("--levels", default=None, help="comma-separated concurrency levels ('': none)")
    ap.add_argument("--requests", type=int, default=None, help="requests per level (default: by backend)")
    ap.add_argument("--data-dir", default=os.environ.get("BIORAB_DATA_DIR"))
    ap.add_argument("--open-rate", type=float, default=None, help="open loop: arrivals per second")
    ap.add_argument("--burst", type=int, default=0, help="burst size for the recovery check (0: none)")
    ap.add_argument("--skip-bare", action="store_true", help="transformers: no offline batched reference")
    args = ap.parse_args()
    os.environ.setdefault("BIORAB_CACHE_DIR", tempfile.mkdtemp(prefix="biorab-bench-"))
    fake = args.backend == "fake"
    default = "1,8,32,64,256" if fake else "1,8"
    levels = [int(x) for x in (default if args.levels is None else args.levels).split(",") if x.strip()]
    n = args.requests or (512 if fake else 32)

    from serve.config import load_serve_config

    overrides: dict[str, Any] = {"name": APP, "data_dir": args.data_dir, "auth": {"enabled": True}}
    if fake:  # waiting for a fuller batch buys nothing when generating costs nothing
        overrides["deployments"] = {"generator": {"batch_wait_timeout_s": 0.002}}
    cfg = load_serve_config(backend="fake" if fake else None, overrides=overrides)
    (one,) = cfg.rals  # smoke.yaml serves one RAL
    batch = cfg.deployments.generator.max_batch_size
    examples = instances(n, args.data_dir)
    print(f"backend={one.backend.name} dataset={one.dataset} retrieval={one.retrieval.testbed}/"
          f"{one.retrieval.retriever} k={one.retrieval.k} max_batch_size={batch} "
          f"ingress max_ongoing/queued={cfg.deployments.ingress.max_ongoing_requests}/"
          f"{cfg.deployments.ingress.max_queued_requests}")

    bare: list[tuple[float, float]] = []
    prompts, backend = [], None
    if not fake and not args.skip_bare:
        from biorab.generation import build_backend

        prompts = rendered_prompts(one, examples)
        backend = build_backend(one.backend.name, one.backend.params)
        bare.append(bare_throughput(one, prompts, batch, backend))
        print(f"bare backend, batches of {batch}: {bare[-1][0]:.3f} prompts/s, {bare[-1][1]:.2f} tokens/s")

    port = free_port()
    start(cfg, port)
    url = f"http://127.0.0.1:{port}"
    asyncio.run(load(url, bodies_of(examples[:max(batch, 8)]), max(batch, 8)))  # warm the replicas
    results = []
    print("served /v1/ral:")
    for c in levels:
        count = n if c > 1 or fake else max(batch, 8)  # one at a time is slow with a real model
        before = len(batch_sizes())
        level = asyncio.run(load(url, bodies_of(examples[:count]), c, open_rate=args.open_rate))
        sizes = batch_sizes()[before:]
        results.append(level)
        mean_batch = statistics.mean(sizes) if sizes else 0.0
        print(level.line() + f"  generator batches: {len(sizes)} (mean size {mean_batch:.1f})")

    if args.burst:
        burst, recovery = burst_recovery(url, bodies_of(instances(args.burst, args.data_dir)), args.burst)
        print(f"burst of {args.burst} (30 s client timeouts): {burst.line().strip()}")
        print(f"  first 200 for a new request {recovery:.2f} s after the burst's last answer "
              "(target <= 15 s)")
    if fake and results:
        direct = direct_latency_ms(one, examples[:100])
        served = results[0].pct(50) if results[0].concurrency == 1 else float("nan")
        print(f"Serve overhead per request: served p50 {served:.2f} ms vs RAL core direct p50 "
              f"{direct:.2f} ms "
              f"= {served / direct:.1f}x ({served - direct:.2f} ms per request)")
        worst = max(results, key=lambda lv: lv.concurrency)
        other = {k: v for k, v in (worst.statuses or {}).items() if k not in ("200", "429", "503")}
        print(f"c={worst.concurrency}: {worst.errors} non-200, of which not 429/503 with Retry-After: "
              f"{sum(other.values())} {other or ''}")
    elif bare:
        from ray import serve

        serve.shutdown()  # free the cores for the second bare run
        bare.append(bare_throughput(one, prompts, batch, backend))
        ref = statistics.mean(b[0] for b in bare)
        ref_tokens = statistics.mean(b[1] for b in bare)
        print(f"bare backend again: {bare[-1][0]:.3f} prompts/s, {bare[-1][1]:.2f} tokens/s (means of both "
              f"runs {ref:.3f}, {ref_tokens:.2f})")
        for level in results:
            if level.concurrency >= batch and level.wall_s > 0:
                tps = level.completion_tokens / level.wall_s
                print(f"served/bare at c={level.concurrency}: {level.throughput / ref:.2f} in prompts/s, "
                      f"{tps / ref_tokens:.2f} in completion tokens/s (target >= 0.8)")


if __name__ == "__main__":
    try:
        main()
    finally:
        import ray

        ray.shutdown()
        shutil.rmtree(RAY_TEMP, ignore_errors=True)
