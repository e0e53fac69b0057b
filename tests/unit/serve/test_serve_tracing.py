"""Traces of served answers (`serve.tracing`): off by default; when on, a sampled answer is written into the
configured MLflow experiment as the same trace a run writes (root, RETRIEVER, LLM and PARSER spans), with
the RAL's name and adapter version as tags. The RAL core answers in-process (fake backend, BM25 over
ADE-corpus-v2's labeled corpus); the store is a local sqlite MLflow."""

from __future__ import annotations

from pathlib import Path

import pytest

from serve.config import load_serve_config

pytestmark = [pytest.mark.slow, pytest.mark.full_data]


def _answer(data_dir: Path, tmp_path: Path) -> tuple[object, object]:
    from biorab.generation import build_backend
    from biorab.ral import Stores
    from serve.answering import example_of, serve_parts

    cfg = load_serve_config(backend="fake", overrides={"data_dir": str(data_dir), "auth": {"enabled": False},
                                                       "cache": {"dir": str(tmp_path / "cache")}})
    (served,) = cfg.rals
    parts = serve_parts(served, cfg.cache.dir)
    ral = parts.ral(backend=build_backend("fake", {"mode": "choice"}), sampling=served.sampling,
                    stores=Stores(), retriever=parts.retriever(store=None), backend_name="fake")
    example = example_of(served, str(ral.task), "Severe rash after amoxicillin.", {}, "req-1")
    return ral.answer_one(example), example


def test_tracing_is_off_by_default() -> None:
    assert load_serve_config(backend="fake").tracing.enabled is False


def test_a_sampled_answer_is_a_run_shaped_trace_tagged_with_the_ral(data_dir: Path, tmp_path: Path) -> None:
    from mlflow import MlflowClient

    from serve.tracing import ServeTracer

    answer, example = _answer(data_dir, tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    info = {"base_model": "smollm2", "adapter": "models:/biorab-ral-adapter@best", "adapter_version": "3"}
    tracer = ServeTracer(uri, "served", 1.0)
    tracer.submit(answer, example, name="ral-a", info=info, request_id="req-1")  # type: ignore[arg-type]
    never = ServeTracer(uri, "served", 0.0)
    never.submit(answer, example, name="ral-b", info=info, request_id="req-2")  # type: ignore[arg-type]
    tracer.flush()
    assert (tracer.written, tracer.failed, never.written) == (1, 0, 0)
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("served")
    (trace,) = client.search_traces(experiment_ids=[experiment.experiment_id])
    tags = trace.info.tags
    assert (tags["biorab.ral"], tags["biorab.adapter_version"], tags["biorab.request_id"]) == \
        ("ral-a", "3", "req-1")
    assert tags["biorab.adapter"] == "models:/biorab-ral-adapter@best"
    spans = {s.name: s for s in trace.data.spans}
    assert {s.span_type for s in spans.values()} == {"CHAIN", "RETRIEVER", "LLM", "PARSER"}
    (hit,) = answer.hits  # type: ignore[attr-defined]
    assert [d["id"] for d in spans["retrieve"].outputs] == [hit.doc_id]
    assert spans["generate"].inputs["messages"][0]["content"] == answer.prompt.text  # type: ignore[attr-defined]
    assert spans["parse"].outputs["prediction"] == answer.prediction.label  # type: ignore[attr-defined]
