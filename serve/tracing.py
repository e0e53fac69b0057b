"""Traces of served answers in the configured MLflow experiment: sampled, off by default.

A sampled answer becomes the same trace a run writes for an instance (`biorab.tracking.traces`: a root span
with RETRIEVER, LLM and PARSER spans, built from the answer as a run row, `biorab.ral.specs.rows`), tagged
with
the RAL's name, adapter and adapter version and the request id. Traces are written by one background thread
of the ingress replica, so a slow or unreachable tracking server never delays an answer (a failed write is
logged and dropped); the experiment is looked up, or created, on the first write.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from biorab.common.records import Example
from biorab.ral import Answer
from biorab.ral.specs.rows import example_row, hits_json, set_generation, set_prediction, set_prompt

log = logging.getLogger("ray.serve")


class ServeTracer:
    """Samples answers (`sample_rate`) and writes their traces into `experiment` at `tracking_uri`."""

    def __init__(self, tracking_uri: str | None, experiment: str, sample_rate: float, *,
                 seed: int | None = None) -> None:
        self.tracking_uri, self.experiment, self.sample_rate = tracking_uri, experiment, sample_rate
        self._random = random.Random(seed)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="traces")
        self._lock = threading.Lock()
        self._tracing: Any = None
        self._experiment_id: str | None = None
        self.written = 0
        self.failed = 0

    def sampled(self) -> bool:
        with self._lock:
            return self._random.random() < self.sample_rate

    def submit(self, answer: Answer, example: Example, *, name: str, info: dict[str, Any],
               request_id: str) -> None:
        """Write `answer`'s trace in the background when it is sampled."""
        if not self.sampled():
            return
        row = answer_row(answer, example)
        tags = {"biorab.ral": name, "biorab.adapter": str(info.get("adapter") or ""),
                "biorab.adapter_version": str(info.get("adapter_version") or ""),
                "biorab.base_model": str(info.get("base_model") or ""), "biorab.request_id": request_id}
        self._pool.submit(self._write, name, str(info.get("base_model") or ""), row, tags)

    def _write(self, name: str, model: str, row: dict[str, Any], tags: dict[str, str]) -> None:
        from biorab.tracking.traces import log_served_trace

        try:
            tracing, experiment_id = self._store()
            log_served_trace(tracing, experiment_id, name=name, model=model, row=row, tags=tags)
            self.written += 1
        except Exception:  # tracing must never fail a request: log it and go on
            self.failed += 1
            log.exception("trace of request %s not written", tags.get("biorab.request_id"))

    def _store(self) -> tuple[Any, str]:
        if self._tracing is None or self._experiment_id is None:
            from mlflow import MlflowClient
            from mlflow.tracing.client import TracingClient

            client = MlflowClient(tracking_uri=self.tracking_uri)
            found = client.get_experiment_by_name(self.experiment)
            self._experiment_id = found.experiment_id if found else client.create_experiment(self.experiment)
            self._tracing = TracingClient(self.tracking_uri)
        return self._tracing, self._experiment_id

    def flush(self, timeout_s: float = 30.0) -> None:
        """Wait until the traces submitted so far are written (tests, shutdown)."""
        self._pool.submit(lambda: None).result(timeout=timeout_s)


def answer_row(answer: Answer, example: Example) -> dict[str, Any]:
    """The served answer as a run row (the columns `biorab.tracking.traces` reads)."""
    row = example_row("serve", 0, example)
    row["hits"] = hits_json(answer.hits)
    set_prompt(row, answer.prompt)
    set_generation(row, answer.generation, key=answer.result.key, cached=answer.result.cached)
    set_prediction(row, answer.prediction)
    row["written_at"] = time.time()
    return row
