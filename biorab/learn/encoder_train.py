"""Train the awareness encoder with the triplet loss of the paper's §4.3.3:

    max(||f(x) - f(e_p)|| - ||f(x) - f(e_n)|| + alpha, 0)

with Euclidean distances and margin alpha (1 by default), on `biorab.learn.triplets` triplets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from biorab.learn.batching import batch_indices, split_eval
from biorab.learn.checks import require_records
from biorab.learn.config import EncoderTrainParams
from biorab.learn.encoder_model import PooledEncoder, new_encoder
from biorab.learn.loop import Loop, LoopResult
from biorab.learn.progress_hook import Report, null_report
from biorab.learn.records import Triplet

Wrap = Callable[[Any], Any]


@dataclass
class EncoderRun:
    """A finished encoder training: the encoder, the loop's losses and held-out metrics."""

    encoder: PooledEncoder
    result: LoopResult
    n_train: int
    n_eval: int


def triplet_loss(encoder: PooledEncoder, batch: Sequence[Triplet], margin: float, device: str) -> Any:
    """Mean triplet loss of `batch` (Euclidean distance, margin `margin`), and the per-triplet hit rate."""
    import torch.nn.functional as F

    vectors = encoder.embed(
        [t.anchor for t in batch] + [t.positive for t in batch] + [t.negative for t in batch], device
    )
    a, p, n = vectors.chunk(3)
    loss = F.triplet_margin_loss(a, p, n, margin=margin, p=2)
    closer = (F.pairwise_distance(a, p) < F.pairwise_distance(a, n)).float().mean()
    return loss, closer


def train_encoder(
    params: EncoderTrainParams,
    triplets: Sequence[Triplet],
    *,
    report: Report = null_report,
    resume_from: Path | None = None,
    shard: tuple[int, int] = (0, 1),
    wrap: Wrap | None = None,
) -> EncoderRun:
    """Train an encoder on `triplets` (see the module docstring).

    Args:
        params: the model, loss and optimisation settings.
        triplets: from `biorab.learn.build_triplets`; split by instance into train and held out.
        report: called after each step (see `biorab.learn.progress_hook`).
        resume_from: a checkpoint folder written by an earlier run of the same config.
        shard: (rank, world size): this worker's share of every batch (Ray Train workers).
        wrap: wraps the trainable module (Ray Train's ``prepare_model`` for DDP).
    """
    import torch

    require_records(triplets, "triplet set", "training")
    train, held = split_eval(
        list(triplets), [t.example_id for t in triplets], params.eval_fraction, params.seed
    )
    require_records(train, "training part of the triplet set", "eval_fraction")
    encoder = new_encoder(params)
    if resume_from is not None:
        _load_weights(encoder, resume_from)
    module = encoder.model.to(params.device)
    trained = wrap(module) if wrap is not None else module
    optimizer = torch.optim.AdamW([p for p in trained.parameters() if p.requires_grad], lr=params.lr)

    def step(i: int) -> float:
        encoder.model = trained
        trained.train()
        batch = [train[j] for j in batch_indices(len(train), params.batch_size, i, params.seed, shard)]
        loss, _ = triplet_loss(encoder, batch, params.margin, params.device)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return float(loss.detach())

    def evaluate() -> dict[str, float]:
        return evaluate_triplets(encoder, held or train, params)

    def save(folder: Path) -> None:
        encoder.model = module
        encoder.save(folder)
        encoder.model = trained

    loop = Loop(step, evaluate, save, optimizer, seed=params.seed)
    start = loop.load_state(resume_from) if resume_from is not None else 0
    result = loop.run(
        max_steps=params.max_steps, checkpoint_every=params.checkpoint_every, report=report, start=start
    )
    encoder.model = module.eval()
    return EncoderRun(encoder, result, len(train), len(held))


def evaluate_triplets(
    encoder: PooledEncoder, triplets: Sequence[Triplet], params: EncoderTrainParams
) -> dict[str, float]:
    """Held-out triplet loss and the share of triplets whose positive is closer than their negative."""
    import torch

    encoder.model.eval()
    losses, hits, n = 0.0, 0.0, 0
    with torch.inference_mode():
        for i in range(0, len(triplets), params.batch_size):
            batch = triplets[i : i + params.batch_size]
            loss, closer = triplet_loss(encoder, batch, params.margin, params.device)
            losses += float(loss) * len(batch)
            hits += float(closer) * len(batch)
            n += len(batch)
    return {"eval_loss": losses / max(n, 1), "eval_accuracy": hits / max(n, 1)}


def _load_weights(encoder: PooledEncoder, folder: Path) -> None:
    """Put a checkpoint's weights into a freshly built encoder of the same config."""
    if encoder.kind == "llm":
        from peft.utils import load_peft_weights, set_peft_model_state_dict

        set_peft_model_state_dict(encoder.model, load_peft_weights(str(folder / "adapter")))
        return
    from transformers import AutoModel

    encoder.model.load_state_dict(AutoModel.from_pretrained(folder / "model").state_dict())
