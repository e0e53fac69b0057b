"""PEFT instruction tuning of the generator on retrieval-augmented training texts (`InstructionRecord`s):
causal-LM loss on the response tokens only, AdamW with linear warm-up, gradient clipping, LoRA (QLoRA with
nf4 on a GPU). The original recipe: r=64, alpha=32, dropout 0.1, lr 2e-4, max_grad_norm 0.3, warmup 3%.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.generation.model_source import ModelSource
from biorab.learn.batching import batch_indices, split_eval
from biorab.learn.checks import require_records, resolve_base_model
from biorab.learn.config import PeftTrainParams
from biorab.learn.loop import Loop, LoopResult
from biorab.learn.progress_hook import Report, null_report
from biorab.learn.records import InstructionRecord

IGNORE = -100  # label id the loss skips (prompt and padding tokens)


@dataclass
class AdapterRun:
    """A finished instruction tuning: the model (with adapter), tokenizer, base and the loop's losses."""

    model: Any
    tokenizer: Any
    source: ModelSource
    result: LoopResult
    n_train: int
    n_eval: int

    def save(self, folder: Path) -> None:
        from biorab.learn.peft_model import save_adapter

        save_adapter(self.model, self.tokenizer, folder, self.source)


def encode_record(tokenizer: Any, record: InstructionRecord, max_length: int) -> tuple[list[int], list[int]]:
    """Token ids and labels of one record: loss on the target and EOS; the prompt is cut from the left
    when the whole does not fit (the instruction's start goes first, the target always stays)."""
    prompt = tokenizer(record.prompt, add_special_tokens=False)["input_ids"]
    target = tokenizer(record.target, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    target = target[:max_length]
    prompt = prompt[max(0, len(prompt) + len(target) - max_length) :]
    return prompt + target, [IGNORE] * len(prompt) + target


def collate(rows: Sequence[tuple[list[int], list[int]]], pad_id: int) -> dict[str, Any]:
    """Right-padded tensors for a batch of (ids, labels)."""
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = [r + [pad_id] * (width - len(r)) for r, _ in rows]
    labels = [lab + [IGNORE] * (width - len(lab)) for _, lab in rows]
    mask = [[1] * len(r) + [0] * (width - len(r)) for r, _ in rows]
    return {
        "input_ids": torch.tensor(ids),
        "labels": torch.tensor(labels),
        "attention_mask": torch.tensor(mask),
    }


def train_adapter(
    params: PeftTrainParams,
    records: Sequence[InstructionRecord],
    *,
    report: Report = null_report,
    resume_from: Path | None = None,
    shard: tuple[int, int] = (0, 1),
    wrap: Callable[[Any], Any] | None = None,
) -> AdapterRun:
    """Instruction-tune a LoRA adapter on `records` (see the module docstring); arguments as in
    `biorab.learn.encoder_train.train_encoder`. Every input is checked before the model is loaded."""
    import torch

    from biorab.learn.peft_model import (
        add_adapter,
        check_init_adapter,
        load_base,
        load_tokenizer,
        quantization,
    )

    require_records(records, "instruction set", "training")
    train, held = split_eval(
        list(records), [r.example_id for r in records], params.eval_fraction, params.seed
    )
    require_records(train, "training part of the instruction set", "eval_fraction")
    source = resolve_base_model(params.model, key="peft.model")
    init = _resolve_init(params.adapter_init)
    if init is not None:
        check_init_adapter(init, params, source)
    quantization(params)
    tokenizer = load_tokenizer(source.location)
    model = add_adapter(load_base(params, source), params, source, init)
    if resume_from is not None:
        _load_adapter_weights(model, resume_from)
    trained = wrap(model) if wrap is not None else model
    encoded = [encode_record(tokenizer, r, params.max_length) for r in train]
    encoded_held = [encode_record(tokenizer, r, params.max_length) for r in held or train]
    optimizer = torch.optim.AdamW([p for p in trained.parameters() if p.requires_grad], lr=params.lr)
    warmup = max(1, int(params.warmup_ratio * params.max_steps))
    # Linear warm-up, then constant (short CPU runs would spend most steps in a decay).
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / warmup))

    def step(i: int) -> float:
        trained.train()
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for micro in range(params.grad_accum):
            idx = batch_indices(
                len(encoded), params.batch_size, i * params.grad_accum + micro, params.seed, shard
            )
            batch = {
                k: v.to(params.device)
                for k, v in collate([encoded[j] for j in idx], tokenizer.pad_token_id).items()
            }
            loss = trained(**batch).loss / params.grad_accum
            loss.backward()
            total += float(loss.detach())
        torch.nn.utils.clip_grad_norm_(
            [p for p in trained.parameters() if p.requires_grad], params.max_grad_norm
        )
        optimizer.step()
        scheduler.step()
        return total

    def evaluate() -> dict[str, float]:
        return {"eval_loss": eval_loss(model, encoded_held, tokenizer.pad_token_id, params)}

    loop = Loop(
        step,
        evaluate,
        lambda folder: _save_checkpoint(model, tokenizer, folder, source),
        optimizer,
        scheduler,
        seed=params.seed,
    )
    start = loop.load_state(resume_from) if resume_from is not None else 0
    result = loop.run(
        max_steps=params.max_steps, checkpoint_every=params.checkpoint_every, report=report, start=start
    )
    return AdapterRun(model.eval(), tokenizer, source, result, len(train), len(held))


def eval_loss(
    model: Any, rows: Sequence[tuple[list[int], list[int]]], pad_id: int, params: PeftTrainParams
) -> float:
    """Mean response-token loss over `rows` (weighted by their number of target tokens)."""
    import torch

    model.eval()
    total, tokens = 0.0, 0
    with torch.inference_mode():
        for i in range(0, len(rows), params.batch_size):
            batch = {
                k: v.to(params.device) for k, v in collate(rows[i : i + params.batch_size], pad_id).items()
            }
            n = int((batch["labels"][:, 1:] != IGNORE).sum())
            total += float(model(**batch).loss) * n
            tokens += n
    return total / max(tokens, 1)


def _resolve_init(adapter_init: str | None) -> str | None:
    if adapter_init is None:
        return None
    from biorab.common.model_refs import resolve_artifact

    return str(resolve_artifact(adapter_init, key="peft.adapter_init"))


def _save_checkpoint(model: Any, tokenizer: Any, folder: Path, source: ModelSource) -> None:
    from biorab.learn.peft_model import save_adapter

    save_adapter(model, tokenizer, folder / "adapter", source)


def _load_adapter_weights(model: Any, checkpoint: Path) -> None:
    from peft.utils import load_peft_weights, set_peft_model_state_dict

    set_peft_model_state_dict(model, load_peft_weights(str(checkpoint / "adapter")))
