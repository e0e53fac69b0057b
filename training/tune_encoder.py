"""`tune_encoder(cfg)`: tune the triplet-loss awareness encoder; the best is registered in MLflow
(``biorab-awareness-encoder@best`` with the shipped jobs) with its ledger AUROC/AUPRC, next to the untrained
encoder's, on the held-out items of the evaluation slice (`biorab.learn.holdout`)."""

from __future__ import annotations

from pathlib import Path

from training.config import TuneJobConfig
from training.job import Progress, TuneOutcome, run_job


def tune_encoder(
    cfg: TuneJobConfig, *, fresh: bool = False, progress: Progress | None = None, root: Path | None = None
) -> TuneOutcome:
    """Build the triplets (checked before Ray starts), tune, then measure the best encoder's ledger AUROC."""
    from biorab.common.errors import ConfigError
    from biorab.learn import build_triplets, records_digest
    from biorab.learn.checks import require_records
    from biorab.learn.encoder_model import base_location

    if cfg.kind != "encoder":
        raise ConfigError(f"tune_encoder needs kind: encoder, got {cfg.kind!r}", key="kind")
    base_location(cfg.encoder)  # a missing base model fails here, before any trial
    hold_out = cfg.hold_out if cfg.hold_out.fraction > 0 else None
    triplets = build_triplets(cfg.training, negatives=cfg.negatives, hold_out=hold_out)
    require_records(triplets.triplets, "triplet set", "training")
    data = {
        "triplets_digest": records_digest(triplets.triplets),
        "corpus_digest": triplets.corpus.digest,
        "n_triplets": len(triplets.triplets),
    }
    if triplets.held_out is not None:
        data["held_out_items"] = len(triplets.held_out.items)
    outcome = run_job(cfg, list(triplets.triplets), data, fresh=fresh, progress=progress, root=root)
    if cfg.evaluation is not None:
        outcome.extra.update(_auroc(outcome, cfg))
    return outcome


def _auroc(outcome: TuneOutcome, cfg: TuneJobConfig) -> dict[str, float]:
    """The best encoder's and the untrained base's ledger AUROC/AUPRC (with bootstrap CIs) on the held-out
    items of `cfg.evaluation` (the same items for both); logged to the parent."""
    from biorab.learn.encoder_eval import slice_auroc
    from biorab.learn.encoder_model import load_encoder, new_encoder

    assert cfg.evaluation is not None
    hold_out = cfg.hold_out if cfg.hold_out.fraction > 0 else None
    encoders = {"trained": load_encoder(outcome.best_checkpoint), "untrained": new_encoder(cfg.encoder)}
    evaluation = cfg.evaluation
    scored = {name: slice_auroc(encoder, evaluation, hold_out, n_boot=cfg.n_boot, seed=evaluation.seed)
              for name, encoder in encoders.items()}
    best = scored["trained"]
    metrics = {"auroc_n": float(best.n), "auroc_n_corrupted": float(best.n_corrupted),
               "held_out": 1.0 if hold_out is not None else 0.0}
    for name, result in scored.items():  # auroc_trained, auroc_trained_ci_low, ..., auprc_untrained_ci_high
        metrics.update(result.to_metrics(name))
    if outcome.parent_run_id and outcome.tracking_uri:
        from training import tracking

        client = tracking.client(outcome.tracking_uri)
        for k, v in metrics.items():
            client.log_metric(outcome.parent_run_id, k, v)
    return metrics
