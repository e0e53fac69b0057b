"""Reasoning twins in the sweep report (issue 43 item 5b): cells that differ only in their reasoning
setting (`biorab.sweep.reasoning_axes`: effort, thinking budget) are paired instance by instance, each set
cell with its model's cell without a setting (the profile's own params: thinking off, or the model's default
effort). Per pair: the answer-flip rate (the parsed answers differ; a parse failure is an answer of its own)
with a bootstrap CI, and the headline metric's difference (set − unset) with the paired bootstrap CI and
McNemar's p of `biorab.metrics.paired.compare`."""

from __future__ import annotations

from biorab.sweep.collect import CellRecord
from biorab.sweep.tables import Grid

NOTE = ("Each cell with a reasoning setting against the same model's cell without one (same data, "
        "retrieval, sampling, seed): answer flips = instances whose parsed answers differ, and the headline "
        "metric's difference (with − without) with a paired bootstrap CI and McNemar p (docs/metrics.md).")


def _key(c: CellRecord) -> tuple[object, ...]:
    base = c.model.removesuffix(f" [{c.reasoning}]") if c.reasoning else c.model
    return (base, c.dataset, c.retriever, c.testbed, c.rate, c.method, c.seed, c.order, c.framing, c.spec)


def twin_pairs(cells: list[CellRecord]) -> list[tuple[CellRecord, CellRecord]]:
    """(without a setting, with one) for every cell with a reasoning setting whose twin is in `cells`."""
    plain = {_key(c): c for c in cells if not c.reasoning}
    return [(plain[_key(c)], c) for c in cells if c.reasoning and _key(c) in plain]


def reasoning_twin_grids(cells: list[CellRecord], *, n_boot: int, seed: int = 0) -> list[Grid]:
    """The twins table (empty without a pair)."""
    from biorab.attribution.rates import rates
    from biorab.common.labels import LABELS
    from biorab.metrics.predictions_scoring import triple_matching_for
    from biorab.sweep.significance import _aligned
    from biorab.tasks import get_task

    pairs = twin_pairs(cells)
    if not pairs:
        return []
    grid = Grid("Reasoning twins: with the setting against without, ×100 [95% CI]",
                ["pairs", "answer flips", "metric", "without", "with", "difference", "McNemar p"], note=NOTE)
    for off, on in pairs:
        golds, preds_off, preds_on = _aligned(off, on)
        flips = [_answer(a) != _answer(b) for a, b in zip(preds_off, preds_on, strict=True)]
        flip = rates({"flip": (flips, [True] * len(flips))}, n_boot=n_boot, seed=seed)["flip"]
        test = get_task(on.task).compare(golds, preds_off, preds_on, metric=on.metric,
                                         labels=LABELS.get(on.dataset), n_boot=n_boot, seed=seed,
                                         triple_matching=triple_matching_for("robust"))
        label = f"{on.model} vs {off.model} / {on.retriever} / {on.corpus} / {on.dataset}"
        grid.rows.append((label, [
            (None, str(len(golds))), (None, _pct(flip.value, flip.ci_low, flip.ci_high)), (None, on.metric),
            (None, _pct(test.value_a)), (None, _pct(test.value_b)),
            (None, _pct(test.delta, test.ci_low, test.ci_high)),
            (None, "n/a" if test.mcnemar.p_value is None else f"{test.mcnemar.p_value:.3f}")]))
    return [grid]


def _answer(p: object) -> tuple[bool, object]:
    """What a flip compares: the parsed label, or the failure itself."""
    ok = bool(getattr(p, "ok", False))
    return ok, getattr(p, "label", None) if ok else None


def _pct(value: float | None, low: float | None = None, high: float | None = None) -> str:
    if value is None or value != value:  # nan: an empty denominator
        return "n/a"
    text = f"{value * 100:.1f}"
    return text + (f" [{low * 100:.1f}, {high * 100:.1f}]" if low is not None and high is not None else "")
