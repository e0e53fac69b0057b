"""The reasoning-chain-length analysis of the Drug Mechanisms Counterfactuals paper (spec §12.3): for the deep
Delete-Link and Invert-Link positives in the open world, how correctness depends on where the edited link
sits in the MoA.

For each such answer, with u the source node of the edited link (u, v) in the reference MoA:
``d_drug = shortest_path_len(drug, u)``, ``d_disease = shortest_path_len(u, disease)`` and the chain length
``moa_length = d_drug + d_disease`` (the path through the edited link). The report gives the accuracy by
each of the three, and a logistic regression of strict correctness on them (statsmodels ``Logit``: the
coefficients with 95% Wald CIs and p-values). ``moa_length`` is the sum of the other two by construction,
so the design is fitted on ``d_drug`` and ``d_disease`` (the length's effect is their common part).

Which answers enter the fit (`DESIGNS`):

- ``paper`` (the default): each model's first run only, pooled over the models given, with the model as
  a covariate when there are several (the paper: n = 2,000, one run × 4 models × 500 answers). A run's
  own report fits its model's first run; the sweep report pools the sweep's models (`pool_reports`).
- ``all_runs``: every run, with cluster-robust (sandwich) standard errors clustered by query (the same
  query answered in five runs is one cluster, not five independent answers).

A fit is not trusted blindly: separation (some combination of the covariates splits correct from wrong
answers, checked by a linear program, independent of the optimizer) or a fit that did not converge is
reported as such (``status``), and its coefficients and p-values are withheld, never printed as "not
significant". The optimizer's warnings are recorded, not silenced.

The original fits scikit-learn's regularised logistic regression over 100 random 75/25 splits and reports
the mean held-out accuracy and mean coefficients (no p-values); this is an unregularised maximum-likelihood
fit on all selected answers (docs/DEVIATIONS.md).
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import networkx as nx

from biorab.drugmech.queries.query_files import CHANGE_LINK, DELETE_LINK

FEATURES = ("d_drug", "d_disease")
#: Which answers a fit uses and how its errors are computed (see the module docstring).
DESIGNS = ("paper", "all_runs")
Design = Literal["paper", "all_runs"]


@dataclass(frozen=True)
class ChainSample:
    """One answer: the edited link's distances, whether the answer was strictly correct, and which model,
    query (``query_file:index``) and run it came from."""

    d_drug: int
    d_disease: int
    correct: bool
    model: str = ""
    query: str = ""
    run: int = 0

    @property
    def moa_length(self) -> int:
        return self.d_drug + self.d_disease

    def to_row(self) -> list[Any]:
        return [self.model, self.query, self.run, self.d_drug, self.d_disease, self.correct]

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> ChainSample:
        model, query, run, d_drug, d_disease, correct = row
        return cls(int(d_drug), int(d_disease), bool(correct), str(model), str(query), int(run))


def link_distances(graph: nx.MultiDiGraph, drug: str, disease: str, source_node: str) -> tuple[int, int]:
    """(drug → source node, source node → disease) shortest path lengths in the MoA graph.

    Raises:
        nx.NetworkXNoPath / nx.NodeNotFound: the node is not on a drug-to-disease path of the MoA.
    """
    return (int(nx.shortest_path_length(graph, drug, source_node)),
            int(nx.shortest_path_length(graph, source_node, disease)))


def chain_samples(rows: Sequence[Any], moa_of: Callable[[str], Any], *,
                  model: str = "") -> tuple[list[ChainSample], dict[str, int]]:
    """The deep Delete/Invert positives answered in the open world, as samples (incomplete answers left
    out), and how many were left out and why: ``missing_moa`` (the query's MoA is not in DrugMechDB) and
    ``off_path`` (its link is on no drug-to-disease path of the MoA).

    `rows` are `biorab.drugmech.scoring.responses.ScoredRow` with their query; `moa_of(moa_id)` gives the
    DrugMechDB MoA (a `KeyError` when it has none); `model` names the answers' model."""
    out: list[ChainSample] = []
    left_out = {"missing_moa": 0, "off_path": 0}
    for r in rows:
        if (r.query_type not in (DELETE_LINK, CHANGE_LINK) or r.is_negative or r.link != "ppi"
                or r.response.world != "open" or r.score.incomplete or r.query is None):
            continue
        info = r.query.edit_link_info
        try:
            moa = moa_of(info.source_moa_id)
        except KeyError:
            left_out["missing_moa"] += 1
            continue
        try:
            d_drug, d_disease = link_distances(moa.graph, moa.root, moa.sink, info.source_node)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            left_out["off_path"] += 1
            continue
        query = f"{r.response.query_file}:{r.response.index}"
        out.append(ChainSample(d_drug, d_disease, bool(r.score.correct_strict), model, query, r.response.run))
    return out, left_out


def select(samples: Sequence[ChainSample], design: Design) -> list[ChainSample]:
    """The answers a `design` fits: ``paper``, each model's first (lowest-numbered) run; ``all_runs``, all."""
    if design == "all_runs":
        return list(samples)
    first: dict[str, int] = {}
    for s in samples:
        first[s.model] = min(first.get(s.model, s.run), s.run)
    return [s for s in samples if s.run == first[s.model]]


def _accuracy_by(samples: Sequence[ChainSample], feature: str) -> list[dict[str, Any]]:
    groups: dict[int, list[bool]] = defaultdict(list)
    for s in samples:
        groups[getattr(s, feature)].append(s.correct)
    return [{feature: k, "n": len(v), "correct": sum(v), "accuracy": sum(v) / len(v)}
            for k, v in sorted(groups.items())]


def separated(x: Any, y: Any) -> bool:
    """Whether the design `x` (with its constant) separates the outcomes `y`, completely or quasi-completely:
    some direction b has (2y - 1)·(x b) >= 0 for every answer and > 0 for one, so the likelihood keeps
    rising along b and the maximum-likelihood estimate does not exist. Found with a linear program
    (maximize the summed signed margins over b in [-1, 1]^k: positive exactly when such a b exists).

    >>> import numpy as np
    >>> x = np.column_stack([np.ones(4), [1, 1, 2, 2]])
    >>> separated(x, np.array([1, 1, 0, 0])), separated(x, np.array([1, 0, 1, 0]))
    (True, False)
    """
    import numpy as np
    from scipy.optimize import linprog

    signed = (2 * np.asarray(y, dtype=float) - 1)[:, None] * np.asarray(x, dtype=float)
    k = signed.shape[1]
    # maximize sum(signed @ b) s.t. signed @ b >= 0, -1 <= b <= 1
    result = linprog(-signed.sum(axis=0), A_ub=-signed, b_ub=np.zeros(len(signed)), bounds=[(-1, 1)] * k,
                     method="highs")
    return bool(result.status == 0 and -result.fun > 1e-7 * max(1.0, float(np.abs(signed).sum())))


def logistic_fit(samples: Sequence[ChainSample], *, cluster: bool = False) -> dict[str, Any]:
    """Logit of correctness on the distances (and the model, as indicator columns against the first model
    in name order, when there are several); `cluster`: standard errors clustered by query.

    Returns ``{"n", "features", "models", "covariance", "status", "warnings", "converged", "coefficients":
    [{"name", "coef", "ci_low", "ci_high", "p_value"}], "pseudo_r2"}``; ``status`` is ``ok``,
    ``separation`` or ``not converged`` (coefficients then ``[]``), or ``{"n", "error"}`` when it cannot
    be fitted at all (too few answers, one class only)."""
    import numpy as np
    import statsmodels.api as sm

    n = len(samples)
    if n < 5 or len({s.correct for s in samples}) < 2:
        return {"n": n, "error": "too few answers, or all of one class, to fit"}
    models = sorted({s.model for s in samples})
    columns = [np.array([getattr(s, f) for s in samples], dtype=float) for f in FEATURES]
    columns += [np.array([s.model == m for s in samples], dtype=float) for m in models[1:]]
    names = ["intercept", *FEATURES, *(f"model[{m}]" for m in models[1:])]
    x = sm.add_constant(np.column_stack(columns), has_constant="add")
    y = np.array([float(s.correct) for s in samples])
    out: dict[str, Any] = {"n": n, "features": list(FEATURES), "models": models,
                           "covariance": "cluster-robust by query" if cluster else "model-based (Wald)"}
    if np.linalg.matrix_rank(x) < x.shape[1]:
        return {**out, "error": "the covariates are collinear (e.g. one distance takes a single value)"}
    kwargs: dict[str, Any] = {}
    if cluster:
        groups = np.unique([s.query for s in samples], return_inverse=True)[1]
        kwargs = {"cov_type": "cluster", "cov_kwds": {"groups": groups}}
        out["clusters"] = int(groups.max()) + 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = sm.Logit(y, x).fit(disp=0, maxiter=200, **kwargs)
    out["warnings"] = sorted({type(w.message).__name__ for w in caught})
    out["converged"] = bool(result.mle_retvals.get("converged", False))
    if separated(x, y):
        return {**out, "status": "separation", "coefficients": []}
    if not out["converged"]:
        return {**out, "status": "not converged", "coefficients": []}
    ci = np.asarray(result.conf_int(alpha=0.05))
    coefficients = [{"name": name, "coef": float(result.params[i]), "ci_low": float(ci[i, 0]),
                     "ci_high": float(ci[i, 1]), "p_value": float(result.pvalues[i])}
                    for i, name in enumerate(names)]
    return {**out, "status": "ok", "coefficients": coefficients, "pseudo_r2": float(result.prsquared)}


def chain_depth_report(samples: Sequence[ChainSample], left_out: Mapping[str, int] | None = None, *,
                       design: Design = "paper") -> dict[str, Any]:
    """Accuracy by MoA length and by each distance over the answers `design` selects, and the logistic fit
    (see the module docstring). ``samples`` keeps every answer (as rows) so runs can be pooled later."""
    chosen = select(samples, design)
    return {
        "design": design,
        "n": len(chosen),
        "n_answers": len(samples),
        "left_out": {"missing_moa": 0, "off_path": 0, **(left_out or {})},
        "by_moa_length": _accuracy_by(chosen, "moa_length"),
        "by_d_drug": _accuracy_by(chosen, "d_drug"),
        "by_d_disease": _accuracy_by(chosen, "d_disease"),
        "logistic": logistic_fit(chosen, cluster=design == "all_runs"),
        "samples": [s.to_row() for s in samples],
    }


def pool_reports(reports: Sequence[Mapping[str, Any]], *, design: Design = "paper") -> dict[str, Any] | None:
    """One report over several runs' chain-depth reports (a sweep's models: the paper's pooled fit, the
    model a covariate); ``None`` when none has answers."""
    samples = [ChainSample.from_row(row) for r in reports for row in r.get("samples", [])]
    if not samples:
        return None
    left_out: dict[str, int] = defaultdict(int)
    for r in reports:
        for key, count in r.get("left_out", {}).items():
            left_out[key] += count
    return chain_depth_report(samples, left_out, design=design)


_DESIGN_TEXT = {
    "paper": "each model's first run (the paper's design), the model a covariate when there are several",
    "all_runs": "every run, standard errors clustered by query",
}


def render_chain_depth(report: Mapping[str, Any]) -> str:
    """Markdown for report.md."""
    left = report["left_out"]
    lines = ["", "### Reasoning-chain length (deep Delete/Invert positives, open world)", "",
             f"{report['n']} answers fitted: {_DESIGN_TEXT[report['design']]} ({report['n_answers']} answers "
             f"in all; left out: {left['missing_moa']} whose MoA is not in DrugMechDB, {left['off_path']} "
             "whose edited link is on no drug-to-disease path of the MoA).", "",
             "| MoA length | n | accuracy |", "|---|---|---|"]
    lines += [f"| {g['moa_length']} | {g['n']} | {g['accuracy']:.3f} |" for g in report["by_moa_length"]]
    fit = report["logistic"]
    if "error" in fit:
        return "\n".join([*lines, "", f"Logistic regression: {fit['error']}."]) + "\n"
    models = f", models {', '.join(fit['models'])}" if len(fit["models"]) > 1 else ""
    head = (f"Logistic regression of strict correctness on {', '.join(fit['features'])} (moa_length is their "
            f"sum){models}, n = {fit['n']}, {fit['covariance']} standard errors")
    noted = f" Optimizer warnings: {', '.join(fit['warnings'])}." if fit["warnings"] else ""
    if fit["status"] != "ok":
        why = ("the answers are separated: some combination of the covariates splits correct from wrong, so "
               "the maximum-likelihood estimate does not exist" if fit["status"] == "separation"
               else "the optimizer did not converge")
        return "\n".join([*lines, "", f"{head}: **not estimable**, {why}; no coefficients or p-values are "
                          f"reported (they would be meaningless, not 'not significant').{noted}"]) + "\n"
    lines += ["", f"{head}, pseudo-R² {fit['pseudo_r2']:.3f}:{noted}", "",
              "| term | coef | 95% CI | p |", "|---|---|---|---|"]
    lines += [f"| {c['name']} | {c['coef']:.3f} | [{c['ci_low']:.3f}, {c['ci_high']:.3f}] | "
              f"{c['p_value']:.3g} |" for c in fit["coefficients"]]
    return "\n".join(lines) + "\n"
