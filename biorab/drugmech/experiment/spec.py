"""The optional ``drugmech:`` section of an experiment config: Drug Mechanisms Counterfactuals query files
evaluated by `biorab run` through the same generation stage, caches, shards and tracking as BioRAB cells.

Each (query file × world, or × disease mode for the factual files, × run) is one cell. Example::

    drugmech:
      query_files: [change_pos_dpi_r250, AddLink_pos_dpi_r1k]
      worlds: [open, closed]
      runs: 5
      limit: null
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from biorab.common.errors import BioRABError
from biorab.common.params import Params

if TYPE_CHECKING:
    from biorab.ral.specs.cell_records import CellPlan

World = Literal["open", "closed"]
DiseaseMode = Literal["ANONYMIZED_DISEASE", "NAMED_DISEASE", "NAMED_DISEASE_WITH_ALL_ASSOCIATIONS"]
#: The task name of DrugMech rows and cells (not a `biorab.tasks` task: they are scored by `biorab.drugmech`).
DRUGMECH_TASK = "drugmech"


class DrugMechSpec(Params):
    """Which DrugMech query files to evaluate, how, and how often.

    Attributes:
        query_files: released file stems (``delete_pos_ppi_r250``) or paths of ``.json`` query files in the
            released schema (e.g. written by ``biorab drugmech generate``).
        worlds: the worlds of the counterfactual files; `modes`: the disease modes of the factual files.
        negative_modes: the disease modes of the factual negative files when they differ from `modes`
            (``None``: `modes`). Outside ``NAMED_DISEASE`` the negatives' diseases are described from
            PrimeKG, the positives' from DrugMechDB: ``modes`` of all three with ``negative_modes:
            [NAMED_DISEASE]`` runs the paper's positive modes without PrimeKG.
        runs: independent runs; run ``r`` samples with ``sampling.seed + r``.
        limit: the first `limit` rows of each file (all when ``None``).
        parser: ``robust`` or ``strict_original`` (scoring only: changing it re-scores the same rows).
        matcher: node-name matcher of the graph scores, ``tfidf`` (the original) or ``rapidfuzz``.
        release_dir / drugmechdb_dir / primekg: data overrides (default: `biorab.common.paths`; PrimeKG's
            ``kg.csv`` is needed only by factual negatives outside ``NAMED_DISEASE``).
        n_resamples / bootstrap_seed: the grouped stratified BCa bootstrap (90% CIs).
        exclude_incomplete: the paper's rule (spec §9.1): an answer whose finish reason is not ``stop``
            (or whose generation failed) is left out of the metrics, numerator and denominator, and counted
            per cell (``n_incomplete``). Off: it counts as wrong. The DrugMech paper's jobs switch it on.
        chain_depth: which answers the chain-depth regression fits (`biorab.drugmech.scoring.chain_depth`):
            ``paper`` (each model's first run, as the paper) or ``all_runs`` (every run, standard errors
            clustered by query). Scoring only.
        answer_constraint: each row carries the answer options of its prompt kind as its output constraint
            (`biorab.drugmech.parsing.answer_options`), for the fake engine's ``constraint`` mode to draw
            from: what ``--rehearse`` sets (`biorab.sweep.rehearsal`). Off in real runs, and the default:
            the backends turn a constraint into guided decoding (vLLM, transformers, vLLM servers), which
            would cut the paper's free-text answers to the bare options.
    """

    query_files: tuple[str, ...] = Field(min_length=1)
    worlds: tuple[World, ...] = Field(default=("open",), min_length=1)
    modes: tuple[DiseaseMode, ...] = Field(default=("NAMED_DISEASE",), min_length=1)
    negative_modes: tuple[DiseaseMode, ...] | None = Field(default=None, min_length=1)
    runs: int = Field(default=1, ge=1)
    limit: int | None = Field(default=None, ge=1)
    parser: Literal["robust", "strict_original"] = "robust"
    matcher: Literal["tfidf", "rapidfuzz"] = "tfidf"
    release_dir: str | None = None
    drugmechdb_dir: str | None = None
    primekg: str | None = None
    n_resamples: int = Field(default=9999, ge=2)
    bootstrap_seed: int = 42
    exclude_incomplete: bool = False
    chain_depth: Literal["paper", "all_runs"] = "paper"
    # left out of the dump when off: a real run's config, its digest and MLflow params read as before
    answer_constraint: bool = Field(default=False, exclude_if=lambda on: not on)

    @field_validator("query_files", "worlds", "modes", "negative_modes")
    @classmethod
    def _unique(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return value
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise ValueError(f"repeated entries: {', '.join(repeated)}")
        return value

    def factual_modes(self, negative: bool) -> tuple[DiseaseMode, ...]:
        """The disease modes of a factual file: `negative_modes` for a negative one when set, else `modes`."""
        return self.negative_modes if negative and self.negative_modes is not None else self.modes

    @classmethod
    def prepare_config(cls, data: Any) -> Any:
        """The whole raw run config before validation (`biorab.common.config_sections`):
        `with_chat_default`."""
        return with_chat_default(data)


def takes_chat(backend: str) -> bool:
    """Whether registered backend `backend` has a ``chat`` param (its ``Params`` model says, read without
    building it; an unknown name: False, the config check names it). The paper sent every prompt as one
    user message (spec §8), so DrugMech turns it on where there is one."""
    from biorab.common.registry import BACKENDS

    if backend not in BACKENDS:
        return False
    params = BACKENDS.params_of(backend)
    return params is not None and "chat" in params.model_fields


def with_chat_default(data: Any) -> Any:
    """A raw config with ``backend.params.chat: true`` added for a DrugMech-only config whose backend has a
    ``chat`` param and does not set it (as ``biorab drugmech respond`` does). BioRAB prompts are raw
    completions, so a config with `datasets` is left as written."""
    if not isinstance(data, Mapping) or not data.get("drugmech") or data.get("datasets"):
        return data
    backend = data.get("backend") or {}
    if not isinstance(backend, Mapping) or not takes_chat(str(backend.get("name", "transformers"))):
        return data
    params = backend.get("params") or {}
    if not isinstance(params, Mapping) or "chat" in params:
        return data
    return {**data, "backend": {**backend, "params": {**params, "chat": True}}}


@dataclass(frozen=True)
class DrugMechCellInfo:
    """What identifies one DrugMech cell (its plan's `biorab.ral.specs.cell_records.CellInfo`): the query file
    (stem, or
    absolute path of a non-released file), its query type, the world or the disease mode (the other is
    ``None``) and the run."""

    query_file: str
    query_type: str
    world: str | None
    mode: str | None
    run: int

    @property
    def setting(self) -> str:
        return self.world or self.mode or ""

    def columns(self) -> dict[str, Any]:
        """The cell as ``summary.json`` and MLflow show it."""
        return {"query_file": self.query_file, "query_type": self.query_type, "world": self.world,
                "mode": self.mode, "run": self.run}

    def response_keys(self) -> dict[str, Any]:
        """The world/mode and run as a responses-file row carries them."""
        key = {"world": self.world} if self.world is not None else {"mode": self.mode}
        return {**key, "run": self.run}


def drugmech_info(plan: CellPlan) -> DrugMechCellInfo:
    """The DrugMech description of a cell planned by the DrugMech source."""
    if not isinstance(plan.info, DrugMechCellInfo):
        raise BioRABError(f"cell {plan.cell_id} (from {plan.source}) is not a DrugMech cell")
    return plan.info
