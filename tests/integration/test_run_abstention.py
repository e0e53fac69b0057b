"""Abstention metrics of a run (issue 43 item 4): a negative-awareness cell on the fake backend with label
scores; summary.json's selective metrics against a recomputation from the rows written here, and the probe
gate against hand-derived numbers (tests/support/awareness_runs.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biorab.experiment import ExperimentConfig
from biorab.runner import run_experiment
from tests.support.awareness_runs import N, answers


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIORAB_CACHE_DIR", str(tmp_path / "cache"))


def recompute(rows: list[dict[str, object]]) -> dict[str, float]:
    """Selective accuracy, AURC and ECE from the rows' label log-probs, written out independently."""
    items = []
    for order, row in enumerate(rows):
        scores = json.loads(str(row["gen_label_logprobs"]))
        total = sum(math.exp(v) for v in scores.values())
        top = max(sorted(scores), key=lambda k: scores[k])
        items.append((math.exp(scores[top]) / total, order, row["pred_label"] == row["label"],
                      top == row["label"]))
    ranked = [right for _, _, right, _ in sorted(items, key=lambda t: (-t[0], t[1]))]
    out = {}
    for c in (100, 75, 50, 25):
        k = math.ceil(len(ranked) * c / 100)
        out[f"selective/accuracy@{c}"] = sum(ranked[:k]) / k
    out["selective/aurc"] = sum(1 - sum(ranked[:k]) / k for k in range(1, len(ranked) + 1)) / len(ranked)
    ece = 0.0
    for b in range(10):
        members = [(p, top_right) for p, _, _, top_right in items if min(int(p * 10), 9) == b]
        if members:
            conf = sum(p for p, _ in members) / len(members)
            acc = sum(r for _, r in members) / len(members)
            ece += len(members) / len(items) * abs(acc - conf)
    out["selective/ece"] = ece
    return out


def test_abstention_metrics_in_summary_match_the_rows(tmp_path: Path, data_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)  # the run's own local store
    cfg = ExperimentConfig.model_validate({
        "name": "abstain", "data_dir": str(data_dir), "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "limit": N}],
        "retrieval": [{"testbed": "negative_awareness", "retriever": "bm25"}],
        "backend": {"name": "fake", "params": {"mode": "map", "answers": answers(data_dir)}},
        "sampling": {"max_tokens": 16, "score_labels": True}, "n_boot": 50, "tracking": {"enabled": True},
    })
    result = run_experiment(cfg)
    (cell,) = result.cells
    rows = pq.read_table(cell.predictions_path).to_pylist()
    assert all(r["gen_label_logprobs"] for r in rows)
    summary = json.loads((result.run_dir / "summary.json").read_text())["cells"][0]
    metrics = summary["metrics"]
    for name, value in recompute(rows).items():
        assert metrics[name]["value"] == pytest.approx(value), name
        assert metrics[name]["ci_low"] is not None
    # The probe gate (answers of tests/support/awareness_runs.py): right on ids 0, 1, 3, 5; the probe
    # trusts ids 0, 1, 5 (all right), distrusts 2, 3, and 4 is unparsable: accuracy 3/3, coverage 3/6, and
    # 4/6 over all probed instances.
    assert metrics["probe_gate/accuracy"]["value"] == pytest.approx(1.0)
    assert metrics["probe_gate/coverage"]["value"] == pytest.approx(0.5)
    assert metrics["probe_gate/accuracy_probed"]["value"] == pytest.approx(4 / 6)
    assert summary["abstention"]["counts"] == {"scored": N, "top_is_gold": 4, "probed": N, "trusted": 3}
    report = result.report_path.read_text()
    assert "## Knowing when to abstain" in report
    gate = " | 1.000 [" + f"{metrics['probe_gate/accuracy']['ci_low']:.3f}, "
    assert gate in report and "Reliability (per confidence bin" in report
    # MLflow, read back from the run's store: every metric of the result ('@' written '_at_': MLflow refuses
    # it in a key), its CI bounds, and its CI tag
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=result.tracking_uri)
    experiment = client.get_experiment_by_name("abstain")
    assert experiment is not None
    (child,) = client.search_runs([experiment.experiment_id],
                                  filter_string=f"tags.cell_id = '{cell.plan.cell_id}'")
    gate_names = ("probe_gate/accuracy", "probe_gate/coverage", "probe_gate/accuracy_probed")
    for name in (*recompute(rows), *gate_names):
        key = name.replace("@", "_at_")
        assert child.data.metrics[key] == pytest.approx(metrics[name]["value"]), key
        assert child.data.metrics["ci_low/" + key] == pytest.approx(metrics[name]["ci_low"]), key
        assert child.data.tags["ci." + key].startswith(f"{metrics[name]['value']:.3f} ["), key
