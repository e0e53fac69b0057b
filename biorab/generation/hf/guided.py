"""Guided decoding for the transformers backend through xgrammar, the grammar engine vLLM uses.

An `OutputConstraint` becomes an xgrammar grammar the way vLLM builds its structured outputs: a closed
label list is the EBNF ``root ::= "a" | "b"`` (vLLM's ``choice``), a regex is compiled as a regex
(vLLM's ``regex``). Grammars are compiled once per (tokenizer, constraint) by `GrammarCache` and shared by
every batch; `RowGrammars` is a `transformers.LogitsProcessor` that keeps one matcher per batch row
(``None`` rows are left free), so one batch may mix constrained and unconstrained prompts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import torch
import xgrammar as xgr
from transformers import LogitsProcessor

from biorab.common.errors import BackendError
from biorab.common.records import OutputConstraint


def grammar_source(constraint: OutputConstraint) -> tuple[str, str]:
    """``("ebnf", text)`` for a label list, ``("regex", text)`` for a regex.

    JSON string literals are valid EBNF string literals in xgrammar (quotes, backslashes, control and
    non-ASCII characters escaped), so any label text is safe.

    >>> grammar_source(OutputConstraint(choices=("y", 'a"b')))
    ('ebnf', 'root ::= "y" | "a\\\\"b"')
    """
    if constraint.choices:
        return "ebnf", "root ::= " + " | ".join(json.dumps(label) for label in constraint.choices)
    if constraint.regex:
        return "regex", constraint.regex
    raise BackendError("output constraint has neither 'choices' nor 'regex'")


class GrammarCache:
    """Compiled grammars of one tokenizer, by constraint (compiled on first use, then reused).

    Args:
        tokenizer: the Hugging Face tokenizer the model generates with.
        vocab_size: the width of the model's logits (may exceed the tokenizer's vocabulary: padding rows).
        stop_token_ids: the tokens that end a row (EOS); the grammar allows them once it is complete.
    """

    def __init__(self, tokenizer: Any, vocab_size: int, stop_token_ids: Iterable[int]) -> None:
        self.vocab_size = vocab_size
        info = xgr.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=vocab_size, stop_token_ids=sorted(stop_token_ids)
        )
        self._compiler = xgr.GrammarCompiler(info)
        self._compiled: dict[OutputConstraint, Any] = {}

    def __len__(self) -> int:
        return len(self._compiled)

    def get(self, constraint: OutputConstraint) -> Any:
        """The compiled grammar of `constraint` (a `BackendError` names a regex xgrammar rejects)."""
        if constraint not in self._compiled:
            kind, text = grammar_source(constraint)
            try:
                compiled = (
                    self._compiler.compile_grammar(text)
                    if kind == "ebnf"
                    else self._compiler.compile_regex(text)
                )
            except Exception as e:  # xgrammar raises RuntimeError/ValueError subclasses for bad input
                raise BackendError(
                    f"constraint {kind} {text[:120]!r} cannot be compiled by xgrammar: {e}"
                ) from e
            self._compiled[constraint] = compiled
        return self._compiled[constraint]


class RowGrammars(LogitsProcessor):
    """Masks each constrained row's logits to the tokens its grammar allows next.

    One instance serves one `generate` call (matchers hold per-row state). A row stops being masked once
    its grammar has accepted a stop token, or when it receives a token the grammar did not offer: that
    only happens after the row has finished for another reason (a stop string or EOS) and `generate`
    keeps feeding it padding.
    """

    def __init__(self, grammars: Sequence[Any | None], vocab_size: int) -> None:
        self._matchers = [xgr.GrammarMatcher(g) if g is not None else None for g in grammars]
        self._active = [m is not None for m in self._matchers]
        self._bitmask = xgr.allocate_token_bitmask(len(grammars), vocab_size)
        self._started = False

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._started:
            last = input_ids[:, -1].tolist()
            for row, matcher in enumerate(self._matchers):
                if not self._active[row] or matcher is None or matcher.is_terminated():
                    continue
                if not matcher.accept_token(last[row]):
                    self._active[row] = False
        self._started = True
        rows = []
        for row, matcher in enumerate(self._matchers):
            if self._active[row] and matcher is not None and not matcher.is_terminated():
                matcher.fill_next_token_bitmask(self._bitmask, row)
                rows.append(row)
        if rows:
            xgr.apply_token_bitmask_inplace(scores, self._bitmask, vocab_size=scores.shape[-1], indices=rows)
        return scores
