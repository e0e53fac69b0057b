"""`tune_encoder(cfg)`: tune the triplet-loss awareness encoder; the best is registered in MLflow
(``biorab-awareness-encoder@best`` with the shipped jobs) with its ledger AUROC on the evaluation slice."""

from __future__ import annotations

from pathlib import Path

from training.config import TuneJobConfig
from training.job import Progress, TuneOutcome, run_job


def tune_encoder(
    cfg: TuneJobConfig, *, fresh: bool = False, progress: Progress | None = None, root: Path | None = None
) -> TuneOutcome:
    """Build the triplets (checked before Ray starts), tune, then measure the best encoder's ledger AUROC."""
    from biorab.errors import ConfigError
    from biorab.learn import build_triplets, records_digest
    from biorab.learn.checks import require_records
    from biorab.learn.encoder_model import base_location

    if cfg.kind != "encoder":
        raise ConfigError(f"tune_encoder needs kind: encoder, got {cfg.kind!r}", key="kind")
    base_location(cfg.encoder)  # a missing base model fails here, before any trial
    triplets = build_triplets(cfg.training, negatives=cfg.negatives)
    require_records(triplets.triplets, "triplet set", "training")
    data = {
        "triplets_digest": records_digest(triplets.triplets),
        "corpus_digest": triplets.corpus.digest,
        "n_triplets": len(triplets.triplets),
    }
    outcome = run_job(cfg, list(triplets.triplets), data, fresh=fresh, progress=progress, root=root)
    if cfg.evaluation is not None:
        outcome.extra.update(_auroc(outcome, cfg))
    return outcome


def _auroc(outcome: TuneOutcome, cfg: TuneJobConfig) -> dict[str, float]:
    """The best encoder's and the untrained base's ledger AUROC on `cfg.evaluation`; logged to the parent."""
    from biorab.learn.encoder_model import load_encoder, new_encoder
    from biorab.learn.scoring import slice_auroc

    assert cfg.evaluation is not None
    trained = slice_auroc(load_encoder(outcome.best_checkpoint), cfg.evaluation)
    untrained = slice_auroc(new_encoder(cfg.encoder), cfg.evaluation)
    metrics = {
        "auroc_trained": trained.auroc,
        "auroc_untrained": untrained.auroc,
        "auroc_n": float(trained.n),
    }
    if outcome.parent_run_id and outcome.tracking_uri:
        from training import tracking

        client = tracking.client(outcome.tracking_uri)
        for k, v in metrics.items():
            client.log_metric(outcome.parent_run_id, k, v)
    return metrics
