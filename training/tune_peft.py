"""`tune_peft(cfg)`: tune PEFT (LoRA / QLoRA) instruction tuning of the generator on retrieval-augmented
training texts; the best adapter is registered in MLflow (``biorab-ral-adapter@best`` with the shipped jobs),
so ``adapter_path: models:/biorab-ral-adapter@best`` in a run config evaluates it."""

from __future__ import annotations

from pathlib import Path

from training.config import TuneJobConfig
from training.job import Progress, TuneOutcome, run_job


def tune_peft(
    cfg: TuneJobConfig, *, fresh: bool = False, progress: Progress | None = None, root: Path | None = None
) -> TuneOutcome:
    """Build and check the instruction set, base model and initial adapter (before Ray starts), then tune."""
    from biorab.common.errors import ConfigError
    from biorab.learn import build_instruction_set, records_digest
    from biorab.learn.checks import require_records, resolve_base_model
    from biorab.learn.peft_model import check_init_adapter, quantization

    if cfg.kind != "peft":
        raise ConfigError(f"tune_peft needs kind: peft, got {cfg.kind!r}", key="kind")
    source = resolve_base_model(cfg.peft.model, key="peft.model")
    quantization(cfg.peft)
    if cfg.peft.adapter_init is not None:
        from biorab.common.model_refs import resolve_artifact

        init = resolve_artifact(cfg.peft.adapter_init, key="peft.adapter_init")
        check_init_adapter(str(init), cfg.peft, source)
        cfg = cfg.model_copy(update={"peft": cfg.peft.model_copy(update={"adapter_init": str(init)})})
    built = build_instruction_set(cfg.training)
    require_records(built.records, "instruction set", "training")
    data = {
        "records_digest": records_digest(built.records),
        "corpus_digest": built.corpus_digest or "",
        "n_records": len(built.records),
    }
    return run_job(cfg, list(built.records), data, fresh=fresh, progress=progress, root=root)
