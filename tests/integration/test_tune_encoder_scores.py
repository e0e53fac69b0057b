"""The Tune encoder job scores the trained weights as "trained" and the base as "untrained".

In the recorded `biorab tune jobs/tune_encoder.yaml` run both AUROCs read 0.518 while the AUPRCs differ
(docs/training.md), which is what scoring the untrained encoder twice would also show for AUROC. Here the
job's scoring step (`training.tune_encoder._auroc`) gets a "best checkpoint" whose weights are the base's
moved by seeded noise: its "trained" numbers must be that checkpoint's own, computed directly, and differ
from the base's; the untrained numbers must be the base's. The job's evaluation slice runs on the fixture
data at 20 instances.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from training.config import load_tune_config
from training.job import TuneOutcome
from training.tune_encoder import _auroc

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore")]  # loads MiniLM three times


def test_the_trained_checkpoint_is_what_is_scored_as_trained(tmp_path: Path, data_dir: Path) -> None:
    import torch

    from biorab.learn.encoder_eval import slice_auroc
    from biorab.learn.encoder_model import load_encoder, new_encoder

    cfg = load_tune_config(REPO / "jobs" / "tune_encoder.yaml")
    assert cfg.evaluation is not None
    evaluation = cfg.evaluation.model_copy(update={"data_dir": str(data_dir), "limit": 20})
    cfg = cfg.model_copy(update={"evaluation": evaluation, "n_boot": 20})

    moved = new_encoder(cfg.encoder)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in moved.model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * 0.5 * float(p.std() if p.numel() > 1 else 0.0))
    moved.save(tmp_path / "best")
    outcome = TuneOutcome(job_dir=tmp_path, best_trial="t", best_params={}, best_metric=0.0,
                          best_checkpoint=tmp_path / "best")

    logged = _auroc(outcome, cfg)

    def direct(encoder: object, name: str) -> dict[str, float]:
        result = slice_auroc(encoder, evaluation, cfg.hold_out, n_boot=20, seed=evaluation.seed)
        return result.to_metrics(name)

    trained = direct(load_encoder(tmp_path / "best"), "trained")
    untrained = direct(new_encoder(cfg.encoder), "untrained")
    assert {k: v for k, v in logged.items() if k.endswith("trained")} == {
        "auroc_trained": trained["auroc_trained"], "auprc_trained": trained["auprc_trained"],
        "auroc_untrained": untrained["auroc_untrained"], "auprc_untrained": untrained["auprc_untrained"]}
    assert logged == {**logged, **trained, **untrained}  # the CIs too
    # the two encoders rank the held-out items differently: had the base been scored twice, the
    # "trained" numbers would be the base's
    assert (trained["auroc_trained"], trained["auprc_trained"]) != (untrained["auroc_untrained"],
                                                                   untrained["auprc_untrained"])
    print(logged)
