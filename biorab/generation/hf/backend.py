"""The ``transformers`` backend: an in-process Hugging Face causal LM, the CPU default.

Prompts are generated in batches (sorted by length to limit padding, results returned in input order)
with left padding and ``pad = eos``. Stop strings are applied per row while generating (so a row stops
early) and the text is cut before the first stop string. With ``score_labels`` or ``constrained``, the
labels of a prompt's closed label set are scored as continuations (`biorab.generation.hf.label_logprobs`).
Other constrained rows (a regex, or labels with ``choices_via="grammar"``) are decoded under an xgrammar
grammar, the engine vLLM uses (`biorab.generation.hf.guided`), so a config constrains alike on both.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, StoppingCriteriaList

from biorab.common.errors import BackendError
from biorab.common.records import Generation, Prompt
from biorab.generation.adapter_base import local_adapter
from biorab.generation.base import SamplingParams, model_input_text, truncate_at_stop
from biorab.generation.dtype import resolve_dtype
from biorab.generation.hf.label_logprobs import ScoringRequest, score_labels
from biorab.generation.hf.params import CAPABILITIES, TransformersParams
from biorab.generation.hf.stopping import RowStopStrings
from biorab.generation.label_answer import with_label_scores
from biorab.generation.model_source import engine_digest, resolve_model, weights_digest
from biorab.generation.reasoning import apply_split, continuation

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


class TransformersBackend:
    """In-process transformers generation (see the module docstring).

    Params:
        model: ``smollm2`` (the prepared CPU default), a local model folder, or a hub id.
        revision: hub revision for a hub id.
        adapter_path: a PEFT adapter folder, hub id, or MLflow ``models:/name@alias`` URI (downloaded once
            into the cache, e.g. ``models:/biorab-ral-adapter@best``), applied on top of the model;
            ``adapter`` is accepted as its alias.
        merge_adapter: merge the adapter into the weights after loading (faster generation).
        dtype: weights dtype; ``auto`` (default) is bf16 on CUDA and on CPUs with native bf16
            (avx512_bf16 / AMX), float32 on other CPUs, where bf16 matmuls are emulated and batching
            then gains almost nothing (docs/generation.md has the measurements).
        device: torch device (``cpu``, ``cuda``, ``cuda:1``...).
        batch_size: prompts per `generate` call (and label continuations per scoring pass).
        num_threads: `torch.set_num_threads` (None keeps torch's default).
        chat: wrap each prompt in the tokenizer's chat template (few-shot prompts work better raw).
        choices_via: how a constrained closed label list is answered: ``score`` (the argmax label by
            sequence log-prob, exact over the list) or ``grammar`` (token-by-token guided decoding, as vLLM).
        cache_dir: cache root for prepared models (default `biorab.common.paths.cache_dir()`).
        auto_prepare: prepare a known model on first use instead of raising `ModelNotPreparedError`.
    """

    Params = TransformersParams  # in its own light module: checking a config needs no torch
    capabilities = CAPABILITIES

    def __init__(self, params: TransformersParams | None = None) -> None:
        self.params = p = params or TransformersParams()
        if p.num_threads:
            torch.set_num_threads(p.num_threads)
        self.source = resolve_model(
            p.model, revision=p.revision, cache_dir=p.cache_dir, auto_prepare=p.auto_prepare
        )
        self.adapter = local_adapter(p.adapter_path, self.source)
        self.dtype = resolve_dtype(p.dtype, p.device)
        self.tokenizer = self._load_tokenizer()
        self.model: Any = self._load_model()
        weights = weights_digest(self.source, self.adapter, self.dtype)  # resolved: auto = explicit
        self._digest = engine_digest(weights, "transformers", p)
        self._grammar_cache: Any = None

    @property
    def model_digest(self) -> str:
        return self._digest

    def _load_tokenizer(self) -> Any:
        kwargs = {"revision": self.params.revision, "trust_remote_code": self.params.trust_remote_code}
        tokenizer = AutoTokenizer.from_pretrained(self.source.location, **kwargs)
        tokenizer.padding_side = "left"  # decoder-only: new tokens must follow the prompt directly
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        return tokenizer

    def _load_model(self) -> Any:
        p = self.params
        model: Any = AutoModelForCausalLM.from_pretrained(
            self.source.location,
            revision=p.revision,
            dtype=_DTYPES[self.dtype],
            trust_remote_code=p.trust_remote_code,
        )
        if self.adapter:
            from peft import PeftModel

            model = PeftModel.from_pretrained(model, self.adapter)
            if p.merge_adapter:
                model = model.merge_and_unload()
        return model.to(p.device).eval()

    @property
    def context_length(self) -> int | None:
        return getattr(self.model.config, "max_position_embeddings", None)

    def generate(self, prompts: Sequence[Prompt], params: SamplingParams) -> list[Generation]:
        """One `Generation` per prompt, in order (see the module docstring)."""
        if self.model is None:
            raise BackendError("transformers backend used after close()")
        texts = [model_input_text(p, self.tokenizer, chat=self.params.chat) for p in prompts]
        ids = [list(self.tokenizer(t, add_special_tokens=not self.params.chat)["input_ids"]) for t in texts]
        out = [self._context_error(row, params) for row in ids]
        scored = self._score(prompts, texts, ids, params, skip=out)
        argmax = self._argmax_rows(prompts, params, scored)
        todo = [i for i in range(len(prompts)) if out[i] is None and i not in argmax]
        for batch in _length_sorted_batches(todo, ids, self.params.batch_size):
            stops = [params.stops_for(prompts[i]) for i in batch]
            grammars = [self._grammar(prompts[i], params) for i in batch]
            generated = self._generate_batch([ids[i] for i in batch], stops, params, grammars)
            for i, gen in zip(batch, generated, strict=True):
                out[i] = gen
        for i, logprobs in scored.items():
            out[i] = with_label_scores(out[i], logprobs, constrained=i in argmax, tokenizer=self.tokenizer,
                                  prompt_tokens=len(ids[i]), batch_size=self.params.batch_size)  # fmt: skip
        return [apply_split(g, self.params.thinking) if g is not None
                else Generation(text="", error="internal: row not generated") for g in out]

    def _argmax_rows(
        self, prompts: Sequence[Prompt], params: SamplingParams, scored: dict[int, dict[str, float]]
    ) -> set[int]:
        """Rows answered by the argmax label instead of decoding (constrained label lists, ``score``)."""
        if not params.constrained or self.params.choices_via != "score":
            return set()
        return set(scored)

    def _grammar(self, prompt: Prompt, params: SamplingParams) -> Any:
        """The compiled grammar that guides this row, or None (unconstrained, or argmax-scored)."""
        constraint = prompt.constraint
        if not params.constrained or constraint is None or not (constraint.regex or constraint.choices):
            return None
        return self.grammars.get(constraint)

    @property
    def grammars(self) -> Any:
        """The `GrammarCache` of this backend's tokenizer, built on first use (xgrammar imported then)."""
        if self._grammar_cache is None:
            from biorab.generation.hf.guided import GrammarCache

            vocab = int(self.model.get_output_embeddings().weight.shape[0])  # the logits' width
            self._grammar_cache = GrammarCache(self.tokenizer, vocab, _eos_ids(self.model, self.tokenizer))
        return self._grammar_cache

    def _context_error(self, row: list[int], params: SamplingParams) -> Generation | None:
        """An error row when the prompt plus `max_tokens` does not fit the model's context."""
        limit = self.context_length
        if limit is None or len(row) + params.max_tokens <= limit:
            return None
        return Generation(text="", prompt_tokens=len(row), error=(
            f"prompt has {len(row)} tokens; with max_tokens={params.max_tokens} it exceeds the model's "
            f"context of {limit} tokens"))  # fmt: skip

    def _score(
        self,
        prompts: Sequence[Prompt],
        texts: list[str],
        ids: list[list[int]],
        params: SamplingParams,
        skip: list[Generation | None],
    ) -> dict[int, dict[str, float]]:
        if not (params.score_labels or (params.constrained and self.params.choices_via == "score")):
            return {}
        rows, requests = [], []
        for i, prompt in enumerate(prompts):
            choices = prompt.constraint.choices if prompt.constraint else None
            if skip[i] is None and choices:
                rows.append(i)
                requests.append(ScoringRequest(ids[i], texts[i], tuple(choices)))
        with torch.inference_mode():
            scores = score_labels(self.model, self.tokenizer, requests, batch_size=self.params.batch_size,
                                  pad_id=self.tokenizer.pad_token_id)  # fmt: skip
        return dict(zip(rows, scores, strict=True))

    def _generate_batch(
        self,
        batch_ids: list[list[int]],
        stops: list[tuple[str, ...]],
        params: SamplingParams,
        grammars: list[Any] | None = None,
    ) -> list[Generation]:
        """A batch's rows; with a thinking budget (and no grammar, which decides the whole reply) in two
        passes (`_budgeted`)."""
        budget = self.params.thinking.token_budget
        guided = bool(grammars) and any(g is not None for g in grammars or ())
        if budget is None or guided:
            rows = self._new_tokens(batch_ids, stops, params.max_tokens, params, grammars)
        else:
            rows = self._budgeted(batch_ids, stops, params, budget)
        return [self._decode_row(tokens, finish, len(batch_ids[i]), stops[i], batch_size=len(batch_ids))
                for i, (tokens, finish) in enumerate(rows)]

    def _budgeted(self, batch_ids: list[list[int]], stops: list[tuple[str, ...]], params: SamplingParams,
                  budget: int) -> list[tuple[list[int], str]]:
        """Thinking up to `budget` new tokens; a row cut there with its reasoning still open gets the close
        marker appended, and those rows (as one batch) generate their answer of up to `max_tokens` in a
        second call on the extended prompt (`reasoning.continuation`). A row that ended within the budget
        is done; one that closed its reasoning and was cut in its answer continues without a marker, for
        what is left of `max_tokens`."""
        first = self._new_tokens(batch_ids, stops, budget, params)
        todo: dict[int, tuple[list[int], int]] = {}  # row -> (reply so far, answer tokens it may add)
        for i, (tokens, finish) in enumerate(first):
            if finish == "length":
                text = self.tokenizer.decode(tokens, skip_special_tokens=True)
                if (more := continuation(tokens, text, params.max_tokens, self.params.thinking,
                                         self.tokenizer)) is not None:
                    todo[i] = more
        if not todo:
            return first
        rows = list(todo)
        longest = max(todo[i][1] for i in rows)
        second = self._new_tokens([batch_ids[i] + todo[i][0] for i in rows], [stops[i] for i in rows],
                                  longest, params)
        out = list(first)
        for i, (tokens, finish) in zip(rows, second, strict=True):
            reply, allowed = todo[i]
            if len(tokens) > allowed:  # the batch ran to its longest allowance
                tokens, finish = tokens[:allowed], "length"
            out[i] = (reply + tokens, finish)
        return out

    @torch.inference_mode()
    def _new_tokens(
        self,
        batch_ids: list[list[int]],
        stops: list[tuple[str, ...]],
        max_new: int,
        params: SamplingParams,
        grammars: list[Any] | None = None,
    ) -> list[tuple[list[int], str]]:
        """One `generate` call: each row's new tokens up to its stop string (``stop``), its EOS included
        (``stop``) or `max_new` (``length``)."""
        pad = self.tokenizer.pad_token_id
        width = max(len(r) for r in batch_ids)
        input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in batch_ids], dtype=torch.long)
        mask = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in batch_ids], dtype=torch.long)
        criterion = RowStopStrings(self.tokenizer, stops, prompt_length=width)
        sampling: dict[str, Any] = {"do_sample": False}
        if not params.greedy:
            sampling = {"do_sample": True, "temperature": params.temperature, "top_p": params.top_p}
        if grammars and any(g is not None for g in grammars):
            from transformers import LogitsProcessorList

            from biorab.generation.hf.guided import RowGrammars

            processor = RowGrammars(grammars, self.grammars.vocab_size)
            # a grammar lets a row end with any EOS it was built with: generate must stop on all of them
            sampling.update(logits_processor=LogitsProcessorList([processor]),
                            eos_token_id=sorted(_eos_ids(self.model, self.tokenizer)))  # fmt: skip
        sampling.update(_prefilled_cache(self.model, batch_ids, max_new, pad))
        with torch.random.fork_rng(devices=[]):  # seeded sampling without touching the caller's RNG
            torch.manual_seed(params.seed)
            output = self.model.generate(
                input_ids=input_ids.to(self.params.device),
                attention_mask=mask.to(self.params.device),
                max_new_tokens=max_new,
                pad_token_id=pad,
                stopping_criteria=StoppingCriteriaList([criterion]),
                **sampling,
            )
        new = output[:, width:].cpu()
        eos = _eos_ids(self.model, self.tokenizer)
        rows = []
        for row in range(len(batch_ids)):
            tokens = new[row].tolist()
            stopped_after = criterion.stopped_after[row]
            if stopped_after is not None:
                count, finish = stopped_after, "stop"
            else:
                first_eos = next((k for k, t in enumerate(tokens) if t in eos), None)
                count, finish = (first_eos + 1, "stop") if first_eos is not None else (len(tokens), "length")
            rows.append((tokens[:count], finish))
        return rows

    def _decode_row(
        self,
        tokens: list[int],
        finish: str,
        prompt_tokens: int,
        stops: tuple[str, ...],
        *,
        batch_size: int,
    ) -> Generation:
        """Text and token counts of one row (its new tokens, a forced close marker included)."""
        text = self.tokenizer.decode(tokens, skip_special_tokens=True)
        text, hit = truncate_at_stop(text, stops)
        return Generation(text=text, prompt_tokens=prompt_tokens, completion_tokens=len(tokens),
                          finish_reason="stop" if hit else finish, batch_size=batch_size)  # fmt: skip

    def close(self) -> None:
        self.model = None
        gc.collect()


def _eos_ids(model: Any, tokenizer: Any) -> set[int]:
    ids = model.generation_config.eos_token_id if model.generation_config is not None else None
    found = set(ids if isinstance(ids, list) else [ids] if ids is not None else [])
    if tokenizer.eos_token_id is not None:
        found.add(tokenizer.eos_token_id)
    return found


def _prefilled_cache(model: Any, batch_ids: list[list[int]], max_tokens: int, pad_id: int) -> dict[str, Any]:
    """`generate`'s cache argument, for models whose layers all attend to the full context: every prompt
    but its last token prefilled without padding into a `ReservedCache` (`biorab.generation.hf.prefill`;
    no per-token copy of the cache while decoding either); `generate` then runs the last tokens as its
    first step. ``{}`` (transformers' default cache and padded prefill) for sliding-window or hybrid
    models, whose layers the reserved cache does not model, and for one-token prompts."""
    from biorab.generation.hf.cache import cache_kwarg
    from biorab.generation.hf.prefill import prefill

    config = model.config.get_text_config(decoder=True)
    layer_types = set(getattr(config, "layer_types", None) or ["full_attention"])
    if getattr(config, "sliding_window", None) or layer_types != {"full_attention"}:
        return {}
    heads = [row[:-1] for row in batch_ids]
    if max(len(h) for h in heads) == 0:
        return {}
    done = prefill(model, heads, reserve=max_tokens + 1, pad_id=pad_id)
    return {cache_kwarg(model): done.cache}


def _length_sorted_batches(rows: list[int], ids: list[list[int]], size: int) -> list[list[int]]:
    """Rows in batches of similar prompt length (less padding), longest first (fails fast on memory)."""
    ordered = sorted(rows, key=lambda i: (-len(ids[i]), i))
    return [ordered[k : k + size] for k in range(0, len(ordered), size)]
