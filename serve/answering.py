"""How the ingress answers: a request becomes an `Example`, the RAL core answers it through the
deployment clients, and the `Answer` becomes JSON. No Serve or HTTP here, so it is testable alone."""

from __future__ import annotations

import sys
from typing import Any

from pydantic import ValidationError

from biorab.caches import GenerationStore
from biorab.common.errors import BioRABError
from biorab.common.paths import cache_dir
from biorab.common.records import Example, Hit
from biorab.generation.base import SamplingParams
from biorab.ral import Answer, AnswerOptions, MethodCorpora, RALParts, Stores, assemble
from biorab.tasks import AWARENESS_NEGATIVE, get_task
from serve.admission import Admission
from serve.clients import GeneratorClient, RetrieverClient, Timings, request_timings
from serve.config import Limits, RALConfig
from serve.errors import ApiError
from serve.generator import CONTEXT_ERROR, LABEL_CONTEXT_ERROR

SPLIT = "serve"


def serve_parts(ral: RALConfig, cache: str | None) -> RALParts:
    """The served RAL's parts (`biorab.ral.assemble`, as a run assembles a cell), assembled once for the app
    in the driver: the retriever deployment builds its retriever from them, the ingress its RAL. An entry
    with a ``method`` gets its transformed corpus there, exactly as a run's cell does (keyed by source
    corpus, method, backend and sampling: a corpus an evaluated run already transformed is reused), under
    the endpoint's cache folder `cache` (``None``: `biorab.common.paths.cache_dir`'s default)."""
    methods = MethodCorpora(ral, cache_dir(cache), on_transform=lambda: _announce(ral))
    with methods:
        return assemble(dataset=ral.dataset, retrieval=ral.retrieval, task=ral.task, parser=ral.parser,
                        seed=ral.seed, data_dir=ral.data_dir, labels=ral.labels, methods=methods)


def _announce(cfg: RALConfig) -> None:
    # Printed, not logged: the driver of `biorab serve` configures no logging.
    print(f"retrieval method {cfg.retrieval.method}: transforming the {cfg.dataset}/{cfg.retrieval.testbed} "
          "corpus with the configured backend before serving (stored and reused afterwards)",
          file=sys.stderr, flush=True)


def example_of(cfg: RALConfig, task: str, text: str, fields: dict[str, Any], example_id: str) -> Example:
    """The served instance as the core's record (no gold label: ``label`` is empty)."""
    return Example(id=example_id, task=task, dataset=cfg.dataset, split=SPLIT, text=text, label="",
                   fields=dict(fields))


def check_scope(cfg: RALConfig, limits: Limits, task: str, *, req_task: str | None, req_dataset: str | None,
                labels: list[str] | None, k: int | None) -> None:
    """422 when a request asks for something this RAL does not serve, or more than the endpoint's
    `limits` allow."""
    if req_task is not None and req_task != task:
        raise ApiError(422, f"field 'task': this RAL serves task {task!r}, not {req_task!r}", param="task")
    if req_dataset is not None and req_dataset != cfg.dataset:
        raise ApiError(422, f"field 'dataset': this RAL serves dataset {cfg.dataset!r}, not {req_dataset!r}",
                       param="dataset")
    if labels is not None and not get_task(task).closed:
        raise ApiError(422, "field 'labels': a label space applies to closed tasks, not "
                       f"{get_task(task).title}", param="labels")
    if labels is not None:
        check_labels(limits, labels)
    if k is not None and k > limits.max_k:
        raise ApiError(422, f"field 'k': at most {limits.max_k}", param="k")
    if k is not None and not cfg.retrieval.retrieves:
        raise ApiError(422, "field 'k': this RAL does not retrieve (testbed 'none')", param="k")


def check_labels(limits: Limits, labels: list[str]) -> None:
    """422 for more labels than `limits.max_labels` or one longer than `limits.max_label_chars`: each label
    is scored as a continuation of the prompt, in a forward pass that cannot be cancelled."""
    if len(labels) > limits.max_labels:
        raise ApiError(422, f"field 'labels': {len(labels)} labels exceed the limit of {limits.max_labels}",
                       param="labels")
    for i, label in enumerate(labels):
        if not label.strip():
            raise ApiError(422, f"field 'labels.{i}': an empty label", param=f"labels.{i}")
        if len(label) > limits.max_label_chars:
            raise ApiError(422, f"field 'labels.{i}': {len(label)} characters exceed the limit of "
                           f"{limits.max_label_chars}", param=f"labels.{i}")


def check_sampling(cfg: RALConfig, limits: Limits, update: dict[str, Any]) -> SamplingParams | None:
    """The RAL's sampling with a request's `update`, validated as a whole (``model_copy`` would take
    any value, and a bad one failed inside the generator's batch, taking its batch-mates with it); 422
    naming the field, or for ``max_tokens`` over the endpoint's `limits.max_tokens`."""
    if not update:
        return None
    limit = limits.max_tokens
    if update.get("max_tokens", 0) > limit:
        raise ApiError(422, f"field 'max_tokens': {update['max_tokens']} exceeds the limit of {limit}",
                       param="max_tokens")
    if "stop" in update:  # a request's stop strings add to the RAL's own (its template may need them)
        update = {**update, "stop": (*cfg.sampling.stop, *update["stop"])}
    try:
        return SamplingParams.model_validate({**cfg.sampling.model_dump(), **update})
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "sampling"
        raise ApiError(422, f"field '{field}': {first['msg']}", param=field) from None


class Answerer:
    """One served RAL of the replica, built from the app's parts (`serve_parts`: the very function `biorab
    run` cells are assembled by), with the deployments' clients as its retriever and backend; a request's
    k, label space and sampling are per-call `AnswerOptions`, bounded by the endpoint's `limits`.
    `admissions`: the bounded queues of its retriever and generator deployments; `adapter`: the adapter its
    generator switches to for its calls (several RALs on one engine)."""

    def __init__(self, cfg: RALConfig, limits: Limits, parts: RALParts, retriever: Any, generator: Any,
                 model_digest: str, store: GenerationStore | None = None, *,
                 admissions: tuple[Admission, Admission] | None = None, adapter: str | None = None) -> None:
        self.cfg, self.limits = cfg, limits
        to_retriever, to_generator = admissions or (None, None)
        self.retriever = RetrieverClient(retriever, to_retriever) if cfg.retrieval.retrieves else None
        self.ral = parts.ral(backend=GeneratorClient(generator, model_digest, to_generator, adapter=adapter),
                             sampling=cfg.sampling,
                             stores=Stores(generations=store), retriever=self.retriever,
                             backend_name=cfg.backend.name)

    @property
    def task(self) -> str:
        return str(self.ral.task)

    def answer(self, example: Example, *, k: int | None = None, labels: list[str] | None = None,
               sampling: dict[str, Any] | None = None) -> tuple[Answer, Timings]:
        """The RAL core's answer to one instance, and the time spent in each deployment."""
        params = check_sampling(self.cfg, self.limits, sampling or {})
        options = AnswerOptions(k=k, labels=tuple(labels) if labels else None, sampling=params)
        with request_timings() as timings:
            try:
                answer = self.ral.answer_one(example, options)
            except BioRABError as e:  # e.g. the template needs a field the request did not send
                raise ApiError(422, _public_message(e), param=getattr(e, "field", None)) from e
        raise_for_generation(answer)
        return answer, timings

    def retrieve(self, text: str, k: int | None) -> tuple[list[Hit], Timings]:
        assert self.retriever is not None  # the ingress checks the scope first
        with request_timings() as timings:
            found = self.retriever.search({"q": text}, k)
        return list(found["q"].hits), timings


def raise_for_generation(answer: Answer) -> None:
    """400 when the prompt did not fit the model's context after retrieval; 502 for other failures."""
    error = answer.generation.error
    if error is None:
        return
    match = CONTEXT_ERROR.search(error)
    if match:
        n, max_tokens, limit = (int(g) for g in match.groups())
        raise ApiError(400, f"input too long: the prompt has {n} tokens after retrieval "
                            f"({len(answer.hits)} retrieved example(s)); with max_tokens={max_tokens} it "
                            "exceeds "
                            f"the model's context of {limit} tokens (shorten the input by at least "
                            f"{n + max_tokens - limit} tokens or ask for a smaller k)", param="input")
    match = LABEL_CONTEXT_ERROR.search(error)
    if match:
        n, label_tokens, limit = (int(g) for g in match.groups())
        raise ApiError(400, f"input too long: the prompt has {n} tokens after retrieval "
                            f"({len(answer.hits)} retrieved example(s)); with a label of {label_tokens} "
                            f"tokens to score it exceeds the model's context of {limit} tokens (shorten the "
                            f"input or the labels by at least {n + label_tokens - limit} tokens)",
                       param="labels")
    raise ApiError(502, "the generator failed for this request; retry later", type="server_error")


def _public_message(e: BioRABError) -> str:
    # DataError/ConfigError prefix a file path when they know one; a served request has none to show.
    text = str(e)
    path = getattr(e, "path", None)
    return text.replace(f"{path}: ", "").replace(f"{path}, ", "") if path else text


def evidence(hits: list[Hit] | tuple[Hit, ...]) -> list[dict[str, Any]]:
    return [{"id": h.doc_id, "text": h.key, "label": h.value, "score": h.score, "rank": h.rank} for h in hits]


def awareness(answer: Answer) -> dict[str, Any] | None:
    """The probe's judgement about the top retrieved example; ``reject``: the model calls it negative."""
    if answer.probe is None:
        return None
    judgement = answer.probe.judgement
    return {"judgement": judgement, "reject": judgement == AWARENESS_NEGATIVE if judgement else None,
            "text": answer.probe.result.generation.text}


def prediction(answer: Answer) -> dict[str, Any]:
    p = answer.prediction
    return {"label": p.label, "ok": p.ok, "raw": p.raw, "scores": p.scores}


def generation(answer: Answer) -> dict[str, Any]:
    g = answer.generation
    out = {"text": g.text, "finish_reason": g.finish_reason, "prompt_tokens": g.prompt_tokens,
           "completion_tokens": g.completion_tokens}
    if g.reasoning is not None:  # a split thinking reply keeps its reasoning beside the answer
        out["reasoning"] = g.reasoning
    return out
