"""`RetrievalSpec`: one retrieval setting, the RAL core's typed input (`biorab.ral.parts.assembly.assemble`).

A run config's ``retrieval:`` entry, a Serve config's ``retrieval:`` block, a training source's retrieval
fields (`biorab.learn.config.TrainingSource.retrieval`) and `biorab retrieve`'s flags are each one of these;
the core owns the type, so the assembly reads the same fields whoever declared them. The fields, their order
and their defaults are the config format (``config.yaml`` of a run, cell fingerprints): unchanged from when
the type lived in `biorab.experiment`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, model_validator

from biorab.common.config_sections import Section
from biorab.common.errors import UnknownNameError
from biorab.common.params import Params
from biorab.common.registry import CORPORA, CORPUS_METHODS
from biorab.ral.specs.evidence_order import MISLEADING_ORDERS, EvidenceOrder
from biorab.retrieval.selection import Selection


def _known_testbed(name: str) -> str:
    """`name` when it is ``none`` (no retrieval) or a testbed corpus kind registered in
    `biorab.common.registry.CORPORA`; else the error names the known ones (pydantic adds the field)."""
    known = ("none", *CORPORA.names())
    if name not in known:  # the registry's own wording (close names suggested), as a field error
        raise ValueError(str(UnknownNameError("testbed", name, known)))
    return name


def _known_method(name: str) -> str:
    """`name` when it is ``none`` or a corpus method registered in `biorab.common.registry.CORPUS_METHODS`."""
    known = ("none", *CORPUS_METHODS.names())
    if name not in known:
        raise ValueError(str(UnknownNameError("corpus method", name, known)))
    return name


#: A testbed name, checked against the registry when a config is validated (a testbed registered by a plug-in
#: is accepted without an edit here).
TestbedKind = Annotated[str, AfterValidator(_known_testbed)]
#: The testbeds with a counterfactual rate: the paper's, and its near / far lies
#: (`biorab.corpora.plausibility`).
RATED_TESTBEDS: tuple[str, ...] = ("counterfactual", "counterfactual_near", "counterfactual_far")
#: A corpus method's name (``none``: the testbed as built), checked against the registry.
MethodName = Annotated[str, AfterValidator(_known_method)]


class _HitSource(Params):
    """Where a retrieval entry's hits come from (see `RetrievalSpec`)."""

    testbed: TestbedKind = "none"
    rate: float | None = Field(default=None, ge=0.0, le=1.0)
    retriever: str = "bm25"
    params: dict[str, Any] = Field(default_factory=dict)


# Bases in this order keep the fields (and the resolved config.yaml of a run) in their order: testbed, rate,
# retriever, params, then the selection (k, keep_ties, tie_pool, dedupe), then the prompt options.
class RetrievalSpec(Selection, _HitSource):
    """One retrieval setting (testbed corpus + retriever + selection + prompt variant).

    Attributes:
        testbed: ``none`` (no retrieval: zero-shot prompt) or the corpus kind of `biorab.corpora`.
        rate: corruption rate of the ``counterfactual`` testbed (and any other kind that takes one).
        retriever: a `RETRIEVERS` name; `params` are its own ``Params`` (but for ``keep_ties`` and ``dedupe``,
            set from the selection).
        k, keep_ties, tie_pool, dedupe, exclude_test_duplicates: which hits go into the prompt, the fields
            of `biorab.retrieval.selection.Selection` (``params: {dedupe: ...}``: dedupe's deprecated
            spelling; ``exclude_test_duplicates: true``: no hit is the query's own text).
        template: the template variant of `biorab.tasks.get_template`.
        awareness_probe: after the task, ask the model the True/False negative-awareness probe about the
            top retrieved example and report the negative-awareness rates. ``None`` (default) means on for
            the ``negative_awareness`` testbed and off otherwise; ``true`` needs a fully counterfactual
            testbed (``negative_awareness``, or ``counterfactual`` at rate 1), where every retrieved example
            is wrong and the rates mean what their names say, unless `probe_any_testbed` is set.
        probe_any_testbed: allow the probe on any retrieving testbed (its rates are then not the paper's
            negative-awareness rates: some probed examples are correct).
        filter: keep only the hits a trained awareness encoder judges helpful (the block registered as
            ``retrieval.filter`` in `biorab.common.registry.CONFIG_SECTIONS`: ``{encoder: <folder or models:/
            URI>,
            threshold: d}``).
        method: transform the testbed corpus before indexing (docs/methods.md): ``detect_correct``
            (labeled / counterfactual testbeds) or ``llm_label`` (the unlabeled testbed); ``none`` keeps it.
        order: the order the selected hits are shown in (`biorab.ral.specs.evidence_order`): ``retrieved``
            (default), ``reverse``, ``shuffle`` (seeded per query) or ``misleading_first`` / ``_middle`` /
            ``_last`` (the best-ranked hit the testbed's ledger corrupted moved there; counterfactual and
            negative-awareness testbeds only).
    """

    # Built on first use, not at import: the ``filter:`` block is a plug-in's model (`biorab.learn`, which
    # imports this module for the core's type), found through the registry when a spec is first validated.
    model_config = ConfigDict(defer_build=True)

    template: str = "default"
    awareness_probe: bool | None = None
    probe_any_testbed: bool = False
    filter: Annotated[Any, Section("retrieval.filter")] | None = None
    method: MethodName = "none"
    order: EvidenceOrder = "retrieved"

    @model_validator(mode="after")
    def _order_needs_corruption(self) -> RetrievalSpec:
        if self.order in MISLEADING_ORDERS and self.testbed not in (*RATED_TESTBEDS, "negative_awareness"):
            raise ValueError(f"order {self.order} moves a hit the testbed's ledger corrupted: it needs a "
                             f"counterfactual or negative_awareness testbed, not {self.testbed!r}")
        if self.order != "retrieved" and not self.retrieves:
            raise ValueError(f"order {self.order} needs retrieved hits; testbed 'none' has none")
        return self

    @model_validator(mode="after")
    def _method_fits_testbed(self) -> RetrievalSpec:
        # The testbeds a method applies to are the plug-in's own fact (`CorpusMethod.testbeds`).
        testbeds = CORPUS_METHODS.get(self.method).testbeds(self.method) if self.method != "none" else ()
        if self.method != "none" and self.testbed not in testbeds:
            allowed = ", ".join(testbeds)
            raise ValueError(f"method {self.method} applies to the {allowed} testbed(s), "
                             f"not {self.testbed!r}")
        return self

    @model_validator(mode="after")
    def _rate_only_for_counterfactual(self) -> RetrievalSpec:
        if self.testbed in RATED_TESTBEDS and self.rate is None:
            raise ValueError(f"the {self.testbed} testbed needs a rate (0..1)")
        return self

    @model_validator(mode="after")
    def _probe_needs_hits(self) -> RetrievalSpec:
        if self.awareness_probe and not self.retrieves:
            raise ValueError("awareness_probe needs retrieved examples; testbed 'none' has none")
        return self

    @model_validator(mode="after")
    def _probe_needs_counterfactual(self) -> RetrievalSpec:
        fully = self.testbed == "negative_awareness" or (
            self.testbed == "counterfactual" and self.rate == 1.0)
        if self.awareness_probe and self.retrieves and not fully and not self.probe_any_testbed:
            at = "" if self.rate is None else f" at rate {self.rate:g}"
            raise ValueError(
                "awareness_probe: the negative-awareness rates are defined on a fully counterfactual corpus "
                f"(testbed negative_awareness, or counterfactual with rate 1), not on testbed "
                f"{self.testbed!r}{at}; set probe_any_testbed: true to probe anyway")
        return self

    @property
    def retrieves(self) -> bool:
        return self.testbed != "none"

    @property
    def probes(self) -> bool:
        """Whether the awareness probe runs (the default: on for the ``negative_awareness`` testbed)."""
        if self.awareness_probe is None:
            return self.testbed == "negative_awareness"
        return self.awareness_probe

    @property
    def retriever_params(self) -> dict[str, Any]:
        """The retriever's params under this setting's selection (`Selection.index_params`)."""
        return self.index_params(self.params)

    def entry_json(self) -> dict[str, Any]:
        """The entry as a sweep writes it into its run configs and digests it into run names: the options
        added later left out at their defaults, so that existing sweeps keep their run names."""
        data = self.model_dump(mode="json")
        for name in ("exclude_test_duplicates", "probe_any_testbed"):
            if not data[name]:
                del data[name]
        if self.order == "retrieved":
            del data["order"]
        return data

    def fingerprint_json(self) -> dict[str, Any]:
        """The setting as digested into cell fingerprints: options at their defaults are left out, so that
        adding an option never changes the fingerprint (and resume) of existing configs."""
        # probe_any_testbed only permits a setting, it changes no row: never part of the fingerprint.
        data = self.model_dump(mode="json", exclude={"awareness_probe", "probe_any_testbed"})
        if self.filter is None:  # added later: absent, so existing fingerprints stay unchanged
            del data["filter"]
        if self.dedupe:
            del data["dedupe"]
        if not self.exclude_test_duplicates:  # added later: absent when off (the paper's setup)
            del data["exclude_test_duplicates"]
        if self.method == "none":
            del data["method"]
        if self.order == "retrieved":  # added later: absent at the default
            del data["order"]
        if self.probes:
            data["awareness_probe"] = True
        return data
