"""`biorab tune CONFIG.yaml [--fresh]`: Ray Tune over Ray Train for the awareness encoder or PEFT instruction
tuning (`training/`), with a progress display; Ray and MLflow are imported only inside the command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def tune(
    config: Annotated[Path, typer.Argument(help="tune job YAML (see jobs/tune_encoder.yaml)")],
    fresh: Annotated[bool, typer.Option("--fresh/--resume", metavar="",
        help="drop the job's trials and start over")] = False,
) -> None:
    """Tune CONFIG; an interrupted job resumes (finished trials are kept) unless --fresh."""
    from training.config import load_tune_config
    from training.progress import LinePrinter

    cfg = load_tune_config(config)
    printer = LinePrinter(tty=sys.stderr.isatty())
    if cfg.kind == "encoder":
        from training.tune_encoder import tune_encoder

        outcome = tune_encoder(cfg, fresh=fresh, progress=printer)
    else:
        from training.tune_peft import tune_peft

        outcome = tune_peft(cfg, fresh=fresh, progress=printer)
    if printer.tty:
        sys.stderr.write("\n")
    typer.echo(
        f"{'resumed' if outcome.restored else 'ran'} {len(outcome.trials)} trials; best {outcome.best_trial} "
        f"{cfg.tune.metric}={outcome.best_metric:.4f} params={outcome.best_params}"
    )
    for name, value in outcome.extra.items():
        typer.echo(f"{name}: {value:.4f}")
    for line in _curve_lines(outcome.extra):
        typer.echo(line)
    if outcome.registered:
        typer.echo(f"registered: {outcome.registered}")
    typer.echo(f"job: {outcome.job_dir}")
    if outcome.tracking_uri:
        typer.echo(f"browse: mlflow ui --backend-store-uri {outcome.tracking_uri}")


def tune_compare(
    config: Annotated[
        Path, typer.Argument(help="run config of the held-out slice (see jobs/eval_tuned.yaml)")
    ],
    adapter: Annotated[str, typer.Option("--adapter", help="adapter folder or models:/ URI")],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="first N rows of each dataset")] = None,
    no_ray: Annotated[bool, typer.Option("--no-ray/--ray", metavar="",
        help="run in-process (default)")] = True,
) -> None:
    """Run CONFIG untuned and with ADAPTER; print each cell's paired difference (tuned - untuned) and CI."""
    from training.evaluate import compare_tuned

    for row in compare_tuned(config, adapter, limit=limit, use_ray=not no_ray):
        c = row.comparison
        ci = "-" if c.ci_low is None else f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}]"
        typer.echo(
            f"{row.cell}: {c.metric} untuned {c.value_a:.4f} tuned {c.value_b:.4f} "
            f"delta {c.delta:+.4f} 95% CI {ci} p={c.p_value} n={c.n} "
            f"McNemar only-untuned/only-tuned {c.mcnemar.only_a}/{c.mcnemar.only_b}"
        )


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
    app.command("tune-compare")(tune_compare)


def _curve_lines(extra: dict[str, float]) -> list[str]:
    """``held-out AUROC: trained 0.518 [0.408, 0.632], untrained ...`` (and AUPRC), where measured.

    >>> _curve_lines({"held_out": 1.0, "auroc_n": 4.0, "auroc_trained": 0.5, "auroc_trained_ci_low": 0.25,
    ...               "auroc_trained_ci_high": 0.75, "auroc_untrained": 0.5})
    ['held-out AUROC over 4 items: trained 0.500 [0.250, 0.750], untrained 0.500 [n/a]']
    """
    where = "held-out" if extra.get("held_out") else "not held-out"
    out = []
    for metric in ("auroc", "auprc"):
        if f"{metric}_trained" not in extra:
            continue
        shown = []
        for name in ("trained", "untrained"):
            key = f"{metric}_{name}"
            low, high = extra.get(f"{key}_ci_low"), extra.get(f"{key}_ci_high")
            ci = "n/a" if low is None or high is None else f"{low:.3f}, {high:.3f}"
            shown.append(f"{name} {extra.get(key, float('nan')):.3f} [{ci}]")
        out.append(f"{where} {metric.upper()} over {extra.get('auroc_n', 0):.0f} items: " + ", ".join(shown))
    return out
