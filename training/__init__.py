"""Ray Tune over Ray Train for the trainers of `biorab.learn`: `tune_encoder(cfg)` and `tune_peft(cfg)`.

One Tune trial runs one Ray Train `TorchTrainer` (so a trial can use several GPU workers; a CPU machine runs
one worker), with checkpoints every N steps, retried failures and resumable jobs; MLflow records one parent
run per job, one child run per trial, and registers the best model under an alias.
"""

from __future__ import annotations

from training.config import TuneJobConfig, load_tune_config

__all__ = ["TuneJobConfig", "load_tune_config"]
