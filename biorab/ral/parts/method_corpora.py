"""`MethodCorpora`: what the assembly runs a retrieval entry's corpus method with (Detect-and-Correct, LLM
labeling), so that a run and Serve prepare a method corpus in one place, `biorab.ral.parts.assembly.assemble`.

A method rewrites the testbed corpus with an LLM before it is indexed. The transformed corpus is stored under
``<cache root>/methods/<key>`` (the key: source corpus digest, method, prompt version, the declared backend
and sampling blocks; `biorab.methods.apply.method_folder`) and read back by every later process, so the LLM
runs once per corpus, ever; within a process each setting is prepared once (`MethodCorpora.folder`). The
transform itself is the plug-in's (`biorab.ral.parts.plugins.corpus_method_of`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from biorab.common.registry import CORPUS_METHODS
from biorab.generation.base import SamplingParams


@dataclass(frozen=True)
class MethodSetting:
    """What a corpus method transforms: one testbed corpus (testbed, contamination rate, the dataset it is
    built for, its seed and data folder) and the method. The plug-in is handed this, never the assembly's
    parts, so the plug-in point (`biorab.ral.parts.plugins`) and this module need nothing of the assembly.
    """

    testbed: str
    rate: float | None
    method: str
    dataset: str
    seed: int
    data_dir: str | None


class DeclaredBackend(Protocol):
    """The config blocks a method corpus is generated with and keyed by: a run config's, a Serve config's."""

    @property
    def backend(self) -> Any: ...  # `biorab.experiment.BackendSpec`: name and params

    @property
    def sampling(self) -> SamplingParams: ...


class MethodCorpora:
    """The backend, cache and batch size the corpus methods of one caller run with.

    Args:
        declared: the config whose ``backend:`` and ``sampling:`` blocks transform the corpora.
        cache_root: where transformed corpora (``methods/``) and their generations are stored.
        backend: a backend already built from `declared` (``None``: built on first need, closed by
            `close`, so a rerun whose corpora are stored builds none and the model is freed before the
            run's own generation starts).
        batch_size: prompts per generation call of a transform.
        on_transform: called before a transform that is not stored yet starts (to say so).
    """

    def __init__(self, declared: DeclaredBackend, cache_root: str | Path, *, backend: Any = None,
                 batch_size: int = 64, on_transform: Callable[[], None] | None = None) -> None:
        self.declared = declared
        self.cache_root = Path(cache_root)
        self.batch_size = batch_size
        self.on_transform = on_transform
        self._given: Any = backend
        self._built: Any = None
        self._folders: dict[tuple[Any, ...], str] = {}

    def backend(self) -> Any:
        """The backend transforms generate with, built from the declared block on first call."""
        if self._given is not None:
            return self._given
        if self._built is None:
            from biorab.generation import build_backend
            from biorab.generation.prepare import prepare_for_backend

            spec = self.declared.backend
            prepare_for_backend(spec.name, spec.params)
            self._built = build_backend(spec.name, spec.params)
        return self._built

    def folder(self, setting: MethodSetting) -> str:
        """The folder of `setting`'s transformed corpus, prepared by its method's plug-in (registered in
        `biorab.common.registry.CORPUS_METHODS`, `biorab.ral.parts.plugins.CorpusMethod`) on the first call
        for the setting."""
        key = (setting.testbed, setting.rate, setting.method, setting.dataset, setting.seed, setting.data_dir)
        if key not in self._folders:
            self._folders[key] = str(CORPUS_METHODS.get(setting.method).prepare(setting, self))
        return self._folders[key]

    def close(self) -> None:
        """Free the backend built here (a given one stays its owner's)."""
        if self._built is not None:
            self._built.close()
            self._built = None

    def __enter__(self) -> MethodCorpora:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
