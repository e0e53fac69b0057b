"""The paper's corpus methods as the plug-in of the RAL assembly (`biorab.ral.parts.plugins.CorpusMethod`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from biorab.common.errors import ConfigError
from biorab.methods.corpus_transform import METHODS, LiveTransform
from biorab.methods.store import StoredTransform

if TYPE_CHECKING:
    from biorab.ral.parts.method_corpora import MethodCorpora, MethodSetting


class PaperCorpusMethod:
    """Detect-and-Correct and LLM labeling: stored transforms under the cache, or live ones."""

    def prepare(self, setting: MethodSetting, methods: MethodCorpora) -> Path:
        """The folder of `setting`'s transformed corpus (`biorab.methods.apply.ensure_method_corpus`)."""
        from biorab.methods.apply import ensure_method_corpus

        return ensure_method_corpus(setting, methods)

    def testbeds(self, method: str) -> tuple[str, ...]:
        """The testbeds `method` applies to (`biorab.methods.corpus_transform.METHODS`)."""
        return METHODS[method]

    def hook(self, method: str, *, corpus_dir: str | None = None, generator: Any = None,
             sampling: Any = None) -> StoredTransform | LiveTransform:
        """The stored transform of `method` in `corpus_dir` when one was prepared (runs and Serve prepare it
        through the assembly before indexing, so a stored corpus is reused and never transformed twice),
        else `method` run live with the RAL's own `generator`."""
        if corpus_dir is not None:
            return StoredTransform(corpus_dir)
        if generator is None or sampling is None:
            raise ConfigError(f"retrieval method {method!r} needs its transformed corpus prepared, or a "
                              "generator to transform the testbed with", key="retrieval.method")
        return LiveTransform(method, generator, sampling)


#: The registered plug-in (`biorab.common.registry.CORPUS_METHODS`: ``detect_correct``, ``llm_label``).
CORPUS_METHOD = PaperCorpusMethod()
