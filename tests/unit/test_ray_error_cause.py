"""A BioRAB error raised in a Ray worker comes out of Ray's wrapping as itself, so `biorab sweep` ends with
its one line and exit 2 (the issue's 240-line traceback ending in `RetrievalError: could not load
encoder 'facebook/contriever'`); the LLM actors' fatal error as before."""

from __future__ import annotations

from ray.exceptions import RayError

from biorab.cli.support.ray_errors import biorab_cause
from biorab.common.errors import BackendFatalError, RetrievalError
from pipelines.ray_executor import backend_fatal_cause

TRACEBACK = """ray::MapWorker(MapBatches(RetrievalActor)).submit() (pid=11826)
  File "biorab/retrieval/encoders.py", line 163, in _load
    raise RetrievalError(
biorab.common.errors.RetrievalError: could not load encoder 'facebook/contriever': offline"""


def test_the_workers_error_is_rebuilt_from_the_traceback() -> None:
    found = biorab_cause(RayError(TRACEBACK))
    assert isinstance(found, RetrievalError)
    assert str(found) == "could not load encoder 'facebook/contriever': offline"
    assert backend_fatal_cause(RayError(TRACEBACK)) is None  # not the LLM actor's kind


def test_the_original_in_the_chain_first_and_plain_errors_pass() -> None:
    original = BackendFatalError("model not found")
    wrapped = RayError("ray text")
    wrapped.__cause__ = original
    assert backend_fatal_cause(wrapped) is original and biorab_cause(wrapped) is original
    assert biorab_cause(ValueError("biorab.common.errors.RetrievalError: x")) is None  # not a Ray error
    assert biorab_cause(RayError("no BioRAB line here")) is None
