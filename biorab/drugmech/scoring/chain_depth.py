"""The reasoning-chain-length analysis of the Drug Mechanisms Counterfactuals paper (spec §12.3): for the deep
Delete-Link and Invert-Link positives in the open world, how correctness depends on where the edited link
sits in the MoA.

For each such answer, with u the source node of the edited link (u, v) in the reference MoA:
``d_drug = shortest_path_len(drug, u)``, ``d_disease = shortest_path_len(u, disease)`` and the chain length
``moa_length = d_drug + d_disease`` (the path through the edited link). The report gives the accuracy by
each of the three, and a logistic regression of strict correctness on them (statsmodels ``Logit``: the
coefficients with 95% Wald CIs and p-values). ``moa_length`` is the sum of the other two, so with all three
the design is singular: it is then fitted on ``d_drug`` and ``d_disease`` (the length's effect is their
common part), and the report says which features were fitted.

The original fits scikit-learn's regularised logistic regression over 100 random 75/25 splits and reports
the mean held-out accuracy and mean coefficients (no p-values); this is an unregularised maximum-likelihood
fit on all answers (docs/DEVIATIONS.md).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

from biorab.drugmech.queries.query_files import CHANGE_LINK, DELETE_LINK

FEATURES = ("d_drug", "d_disease", "moa_length")


@dataclass(frozen=True)
class ChainSample:
    """One answer: the edited link's distances and whether the answer was strictly correct."""

    d_drug: int
    d_disease: int
    correct: bool

    @property
    def moa_length(self) -> int:
        return self.d_drug + self.d_disease


def link_distances(graph: nx.MultiDiGraph, drug: str, disease: str, source_node: str) -> tuple[int, int]:
    """(drug → source node, source node → disease) shortest path lengths in the MoA graph.

    Raises:
        nx.NetworkXNoPath / nx.NodeNotFound: the node is not on a drug-to-disease path of the MoA.
    """
    return (int(nx.shortest_path_length(graph, drug, source_node)),
            int(nx.shortest_path_length(graph, source_node, disease)))


def chain_samples(rows: Sequence[Any], moa_of: Callable[[str], Any]) -> tuple[list[ChainSample], int]:
    """The deep Delete/Invert positives answered in the open world, as samples (incomplete answers left
    out), and how many were skipped because their MoA is not in DrugMechDB or their link is on no
    drug-to-disease path of it.

    `rows` are `biorab.drugmech.scoring.responses.ScoredRow` with their query; `moa_of(moa_id)` gives the
    DrugMechDB MoA."""
    out, skipped = [], 0
    for r in rows:
        if (r.query_type not in (DELETE_LINK, CHANGE_LINK) or r.is_negative or r.link != "ppi"
                or r.response.world != "open" or r.score.incomplete or r.query is None):
            continue
        info = r.query.edit_link_info
        try:
            moa = moa_of(info.source_moa_id)
            d_drug, d_disease = link_distances(moa.graph, moa.root, moa.sink, info.source_node)
        except (KeyError, nx.NetworkXNoPath, nx.NodeNotFound):
            skipped += 1
            continue
        out.append(ChainSample(d_drug, d_disease, bool(r.score.correct_strict)))
    return out, skipped


def _accuracy_by(samples: Sequence[ChainSample], feature: str) -> list[dict[str, Any]]:
    groups: dict[int, list[bool]] = defaultdict(list)
    for s in samples:
        groups[getattr(s, feature)].append(s.correct)
    return [{feature: k, "n": len(v), "correct": sum(v), "accuracy": sum(v) / len(v)}
            for k, v in sorted(groups.items())]


def logistic_fit(samples: Sequence[ChainSample]) -> dict[str, Any]:
    """Logit of correctness on the distances; ``{"features", "dropped", "n", "coefficients": [{"name",
    "coef", "ci_low", "ci_high", "p_value"}], "converged", "pseudo_r2"}`` or ``{"error": ...}`` when it
    cannot be fitted (too few answers, one class only, perfect separation)."""
    import numpy as np
    import statsmodels.api as sm

    n = len(samples)
    outcomes = {s.correct for s in samples}
    if n < 5 or len(outcomes) < 2:
        return {"n": n, "error": "too few answers, or all of one class, to fit"}
    columns = {f: np.array([getattr(s, f) for s in samples], dtype=float) for f in FEATURES}
    features, dropped = list(FEATURES), []
    if np.linalg.matrix_rank(np.column_stack([np.ones(n), *columns.values()])) < len(FEATURES) + 1:
        features, dropped = ["d_drug", "d_disease"], ["moa_length"]  # moa_length = d_drug + d_disease
    x = sm.add_constant(np.column_stack([columns[f] for f in features]), has_constant="add")
    y = np.array([float(s.correct) for s in samples])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter; reported as `converged`
        try:
            result = sm.Logit(y, x).fit(disp=0, maxiter=200)
        except (np.linalg.LinAlgError, ValueError) as e:
            return {"n": n, "error": f"logistic regression failed: {e}"}
    ci = np.asarray(result.conf_int(alpha=0.05))
    names = ["intercept", *features]
    coefficients = [{"name": name, "coef": float(result.params[i]), "ci_low": float(ci[i, 0]),
                     "ci_high": float(ci[i, 1]), "p_value": float(result.pvalues[i])}
                    for i, name in enumerate(names)]
    return {"n": n, "features": features, "dropped": dropped, "coefficients": coefficients,
            "converged": bool(result.mle_retvals.get("converged", False)),
            "pseudo_r2": float(result.prsquared)}


def chain_depth_report(samples: Sequence[ChainSample], skipped: int = 0) -> dict[str, Any]:
    """Accuracy by MoA length and by each distance, and the logistic fit (see the module docstring)."""
    return {
        "n": len(samples),
        "skipped_off_path": skipped,
        "by_moa_length": _accuracy_by(samples, "moa_length"),
        "by_d_drug": _accuracy_by(samples, "d_drug"),
        "by_d_disease": _accuracy_by(samples, "d_disease"),
        "logistic": logistic_fit(samples),
    }


def render_chain_depth(report: dict[str, Any]) -> str:
    """Markdown for report.md."""
    lines = ["", "### Reasoning-chain length (deep Delete/Invert positives, open world)", "",
             f"{report['n']} answers ({report['skipped_off_path']} left out: the edited link is on no "
             "drug-to-disease path of the reference MoA).", "",
             "| MoA length | n | accuracy |", "|---|---|---|"]
    lines += [f"| {g['moa_length']} | {g['n']} | {g['accuracy']:.3f} |" for g in report["by_moa_length"]]
    fit = report["logistic"]
    if "error" in fit:
        return "\n".join([*lines, "", f"Logistic regression: {fit['error']}."]) + "\n"
    dropped = f" ({', '.join(fit['dropped'])} left out: the sum of the others)" if fit["dropped"] else ""
    lines += ["", f"Logistic regression of strict correctness on {', '.join(fit['features'])}{dropped}, "
                  f"n = {fit['n']}, pseudo-R² {fit['pseudo_r2']:.3f}:", "",
              "| term | coef | 95% CI | p |", "|---|---|---|---|"]
    lines += [f"| {c['name']} | {c['coef']:.3f} | [{c['ci_low']:.3f}, {c['ci_high']:.3f}] | "
              f"{c['p_value']:.3g} |" for c in fit["coefficients"]]
    return "\n".join(lines) + "\n"
