"""The reasoning-chain-length analysis (spec §12.3) on fixtures with a known answer.

The 2 × 2 design below has proportions correct whose log-odds are exactly additive in d_drug and d_disease
(0, ln 3, ln 3, 2 ln 3), so the maximum-likelihood logit reproduces them: intercept -2 ln 3 and both slopes
ln 3. The standard errors are checked against the inverse Fisher information computed here by hand. A
second model whose odds are all doubled adds a model coefficient of exactly ln 2. A simulation from a
known logistic model (fixed seed) checks the clustered design; separated samples must be reported as
such."""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import networkx as nx
import numpy as np
import pytest

from biorab.drugmech.queries.query_files import ADD_LINK, DELETE_LINK
from biorab.drugmech.scoring.chain_depth import (
    ChainSample,
    chain_depth_report,
    chain_samples,
    link_distances,
    pool_reports,
    render_chain_depth,
    separated,
)

# (d_drug, d_disease) -> (answers, correct)
DESIGN = {(1, 1): (20, 10), (2, 1): (20, 15), (1, 2): (20, 15), (2, 2): (20, 18)}


def _samples(design: dict[tuple[int, int], tuple[int, int]] = DESIGN, model: str = "") -> list[ChainSample]:
    out = []
    for (d_drug, d_disease), (n, k) in design.items():
        out += [ChainSample(d_drug, d_disease, i < k, model, f"q{d_drug}{d_disease}-{i}") for i in range(n)]
    return out


def test_accuracy_by_length_and_distance() -> None:
    report = chain_depth_report(_samples())
    assert report["by_moa_length"] == [
        {"moa_length": 2, "n": 20, "correct": 10, "accuracy": 0.5},
        {"moa_length": 3, "n": 40, "correct": 30, "accuracy": 0.75},
        {"moa_length": 4, "n": 20, "correct": 18, "accuracy": 0.9},
    ]
    assert report["by_d_drug"] == [{"d_drug": 1, "n": 40, "correct": 25, "accuracy": 0.625},
                                   {"d_drug": 2, "n": 40, "correct": 33, "accuracy": 0.825}]


def test_logistic_regression_known_answer() -> None:
    fit = chain_depth_report(_samples())["logistic"]
    assert fit["features"] == ["d_drug", "d_disease"]  # moa_length is their sum
    assert fit["n"] == 80 and fit["converged"] and fit["status"] == "ok" and fit["warnings"] == []
    coef = {c["name"]: c for c in fit["coefficients"]}
    ln3 = math.log(3)
    assert coef["intercept"]["coef"] == pytest.approx(-2 * ln3, abs=1e-6)
    assert coef["d_drug"]["coef"] == pytest.approx(ln3, abs=1e-6)
    assert coef["d_disease"]["coef"] == pytest.approx(ln3, abs=1e-6)
    # Wald: SE from the inverse Fisher information X'WX, W = p(1 - p) at the fitted (= observed) p
    rows = [(1.0, a, b, n, k / n) for (a, b), (n, k) in DESIGN.items()]
    info = sum(n * p * (1 - p) * np.outer([c, a, b], [c, a, b]) for c, a, b, n, p in rows)
    se = np.sqrt(np.diag(np.linalg.inv(info)))
    for i, name in enumerate(("intercept", "d_drug", "d_disease")):
        c = coef[name]
        assert c["ci_high"] - c["ci_low"] == pytest.approx(2 * 1.959964 * se[i], rel=1e-4)
        z = c["coef"] / se[i]
        assert c["p_value"] == pytest.approx(math.erfc(abs(z) / math.sqrt(2)), rel=1e-4)
    assert coef["d_drug"]["p_value"] == pytest.approx(0.0441, abs=1e-4)  # pinned: z = 2.01


def test_unfittable_inputs_and_rendering() -> None:
    assert chain_depth_report([ChainSample(1, 1, True)] * 10)["logistic"]["error"].startswith("too few")
    # d_disease takes one value: collinear with the intercept, said so (not fitted)
    one_value = [ChainSample(d, 1, i % 2 == 0) for d in (1, 2) for i in range(10)]
    assert "collinear" in chain_depth_report(one_value)["logistic"]["error"]
    text = render_chain_depth(chain_depth_report(_samples()))
    assert "| 3 | 40 | 0.750 |" in text and "| d_drug | 1.099 |" in text
    assert "each model's first run (the paper's design)" in text and "model-based (Wald)" in text


# the same design for a second model with every odds doubled: (2, 1) -> 2/3, (6, 1) -> 6/7, (18, 1) -> 18/19
DOUBLED = {(1, 1): (30, 20), (2, 1): (35, 30), (1, 2): (35, 30), (2, 2): (19, 18)}


def test_model_is_a_covariate_when_pooled() -> None:
    runs = [chain_depth_report(_samples(DESIGN, "a")), chain_depth_report(_samples(DOUBLED, "b"))]
    pooled = pool_reports(runs)
    assert pooled is not None and pooled["n"] == 80 + 119
    fit = pooled["logistic"]
    assert fit["models"] == ["a", "b"] and fit["status"] == "ok"
    coef = {c["name"]: c["coef"] for c in fit["coefficients"]}
    ln3 = math.log(3)
    assert coef == pytest.approx({"intercept": -2 * ln3, "d_drug": ln3, "d_disease": ln3,
                                  "model[b]": math.log(2)}, abs=1e-6)
    assert "models a, b" in render_chain_depth(pooled)


def test_paper_design_fits_each_models_first_run_only() -> None:
    # run 1 of model "a" answers everything wrong: the paper's design never sees it
    later = [ChainSample(s.d_drug, s.d_disease, False, "a", s.query, 1) for s in _samples(DESIGN, "a")]
    report = chain_depth_report([*_samples(DESIGN, "a"), *later])
    assert report["n"] == 80 and report["n_answers"] == 160
    assert {c["name"]: c["coef"] for c in report["logistic"]["coefficients"]}["d_drug"] == pytest.approx(
        math.log(3), abs=1e-6)
    assert chain_depth_report([*_samples(DESIGN, "a"), *later], design="all_runs")["n"] == 160


def test_complete_separation_is_reported_not_called_insignificant() -> None:
    samples = [ChainSample(d, 1 + i % 2, d == 1, "a", f"q{d}-{i}") for d in (1, 2) for i in range(20)]
    report = chain_depth_report(samples)
    fit = report["logistic"]
    assert fit["status"] == "separation" and fit["coefficients"] == []
    assert not fit["converged"] and "PerfectSeparationWarning" in fit["warnings"]
    text = render_chain_depth(report)
    assert "**not estimable**, the answers are separated" in text and "| term |" not in text


def test_quasi_separation_is_found() -> None:
    # d_drug 1: all wrong, 2: mixed, 3: all right. b = (-2, 1, 0) has signed margins 0 at d_drug 2 and > 0
    # elsewhere (quasi-complete separation): the d_drug slope's MLE is infinite
    samples = [ChainSample(d, 1 + i % 2, d == 3 or (d == 2 and i % 3 == 0), "", f"q{d}-{i}")
               for d in (1, 2, 3) for i in range(12)]
    fit = chain_depth_report(samples)["logistic"]
    assert fit["status"] == "separation" and fit["coefficients"] == []
    assert separated(np.column_stack([np.ones(4), [1, 2, 3, 3]]), np.array([0, 1, 1, 1]))
    # an all-right group at one end is no separation when the mixed groups pin the line down (a finite MLE)
    mixed = _samples() + [ChainSample(3, 1 + i % 2, True, "", f"r{i}") for i in range(10)]
    assert chain_depth_report(mixed)["logistic"]["status"] == "ok"
    assert not separated(np.column_stack([np.ones(4), [1, 2, 1, 2]]), np.array([0, 1, 1, 0]))


def _simulated(rng: np.random.Generator, query_sd: float, runs: int) -> list[ChainSample]:
    """400 queries, each answered `runs` times, correct with log-odds 0.2 - 0.5 d_drug + 0.3 d_disease plus a
    query effect ~ N(0, query_sd) shared by the query's runs."""
    samples = []
    for q in range(400):
        d_drug, d_disease = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        logit = 0.2 - 0.5 * d_drug + 0.3 * d_disease + rng.normal(0, query_sd)
        for run in range(runs):
            samples.append(ChainSample(d_drug, d_disease, bool(rng.random() < 1 / (1 + math.exp(-logit))),
                                       "m", f"q{q}", run))
    return samples


def test_known_slopes_within_their_intervals() -> None:
    # no query effect: the generating coefficients are the fitted model's; 5 runs, the paper's design
    # fits run 0 only (400 answers)
    report = chain_depth_report(_simulated(np.random.default_rng(11), 0.0, 5))
    assert report["n"] == 400 and report["n_answers"] == 2000
    coef = {c["name"]: c for c in report["logistic"]["coefficients"]}
    for name, true in (("intercept", 0.2), ("d_drug", -0.5), ("d_disease", 0.3)):
        assert coef[name]["ci_low"] < true < coef[name]["ci_high"], name
    assert coef["d_drug"]["p_value"] < 0.01


def test_clusters_widen_the_interval_of_repeated_queries() -> None:
    # a query effect (sd 1.5) makes a query's 5 runs alike: the latent intraclass correlation is
    # 1.5² / (1.5² + π²/3) = 0.41, so the variance of a per-query slope estimate is inflated by about
    # 1 + (5 - 1) ρ with ρ the (smaller) correlation of the binary answers, ~0.25: an interval ~1.4 times
    # the naive one
    samples = _simulated(np.random.default_rng(7), 1.5, 5)
    clustered = chain_depth_report(samples, design="all_runs")
    assert clustered["n"] == 2000 and clustered["logistic"]["clusters"] == 400
    slope = next(c for c in clustered["logistic"]["coefficients"] if c["name"] == "d_drug")
    naive = next(c for c in logistic_naive(samples) if c["name"] == "d_drug")
    assert slope["coef"] == pytest.approx(naive["coef"])  # the same estimate, other errors
    assert slope["ci_high"] - slope["ci_low"] > 1.25 * (naive["ci_high"] - naive["ci_low"])
    assert slope["ci_high"] < 0
    assert "standard errors clustered by query" in render_chain_depth(clustered)


def logistic_naive(samples: list[ChainSample]) -> list[dict[str, float]]:
    from biorab.drugmech.scoring.chain_depth import logistic_fit

    return logistic_fit(samples)["coefficients"]  # type: ignore[no-any-return]


@dataclass
class _Moa:
    graph: nx.MultiDiGraph
    root: str
    sink: str


def test_samples_from_scored_rows() -> None:
    g = nx.MultiDiGraph()
    g.add_edges_from([("drug", "p1", "inhibits"), ("p1", "p2", "increases"), ("p2", "dis", "causes"),
                      ("drug", "p2", "binds")])
    moa = _Moa(g, "drug", "dis")
    assert link_distances(g, "drug", "dis", "p1") == (1, 2)

    def row(node: str, *, world: str = "open", negative: bool = False, link: str = "ppi",
            qtype: str = DELETE_LINK, incomplete: bool = False, correct: bool = True,
            moa_id: str = "M1", index: int = 0) -> SimpleNamespace:
        query = SimpleNamespace(edit_link_info=SimpleNamespace(source_moa_id=moa_id, source_node=node))
        return SimpleNamespace(query_type=qtype, is_negative=negative, link=link, query=query,
                               response=SimpleNamespace(world=world, query_file="delete_pos_ppi_r250",
                                                        index=index, run=2),
                               score=SimpleNamespace(incomplete=incomplete, correct_strict=correct))

    rows = [row("p1"), row("p2", correct=False, index=1), row("p1", world="closed"), row("p1", negative=True),
            row("p1", link="dpi"), row("p1", qtype=ADD_LINK), row("p1", incomplete=True), row("elsewhere"),
            row("p1", moa_id="gone")]
    moas = {"M1": moa}
    samples, left_out = chain_samples(rows, lambda moa_id: moas[moa_id], model="m")
    assert samples == [ChainSample(1, 2, True, "m", "delete_pos_ppi_r250:0", 2),
                       ChainSample(1, 1, False, "m", "delete_pos_ppi_r250:1", 2)]
    assert left_out == {"missing_moa": 1, "off_path": 1}
    text = render_chain_depth(chain_depth_report(samples, left_out))
    assert "left out: 1 whose MoA is not in DrugMechDB, 1 whose edited link is on no" in text


def test_the_sweep_report_pools_its_runs_with_the_model_a_covariate(monkeypatch: pytest.MonkeyPatch) -> None:
    import biorab.sweep.collect as collect
    from biorab.sweep.report import chain_depth_markdown

    runs = [chain_depth_report(_samples(DESIGN, "a")), chain_depth_report(_samples(DOUBLED, "b"))]
    monkeypatch.setattr(collect, "chain_depth_sections", lambda sweep, path=None: runs)
    text = chain_depth_markdown(SimpleNamespace(drugmech={"query_files": ["x"]}))  # type: ignore[arg-type]
    assert text.startswith("\n## DrugMech, pooled over the sweep's models\n")
    assert "199 answers fitted: each model's first run (the paper's design)" in text and "models a, b" in text
    assert "| model[b] | 0.693 |" in text  # ln 2
    monkeypatch.setattr(collect, "chain_depth_sections", lambda sweep, path=None: [])
    assert chain_depth_markdown(SimpleNamespace(drugmech=None)) == ""  # type: ignore[arg-type]
