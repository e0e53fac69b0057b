"""The vLLM engine settings of tests/vllm and tests/ray (and of jobs/smoke_vllm.yaml): SmolLM2 float32
(bf16 is emulated, ~5x slower, on CPUs without native bf16), eager, a 2048-token context, 1 GiB KV cache."""

from __future__ import annotations

ENGINE = {"model": "smollm2", "dtype": "float32", "device": "cpu", "max_model_len": 2048,
          "cpu_kvcache_gib": 1}

#: Environment for an in-process engine (no engine-core subprocess) in tests.
ENGINE_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1",
              "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
