"""Training configs: where the training set comes from, and the two trainers' hyper-parameters.

All are frozen pydantic models with ``extra="forbid"`` (a misspelt key is an error naming it). The paper's
GPU settings (LoRA r=64, alpha=32, dropout 0.1, lr 2e-4, 4-bit nf4) are in ``jobs/tune_peft_gpu.yaml``;
the defaults here are sized for a CPU and the 135M model.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from biorab.common.params import Params
from biorab.ral.specs.retrieval_spec import RetrievalSpec, TestbedKind


class TrainingSource(Params):
    """One dataset's training split with its retrieval setting, rendered like a `biorab run` cell.

    Attributes:
        dataset, split, limit: the instances (the first `limit` rows of `split`).
        testbed, rate, retriever, retriever_params, k: the retrieval corpus and retriever, as in a run
            config's retrieval entry (an instance never retrieves itself).
        template: the template variant (`biorab.tasks.get_template`).
        match_inference: train on the inference wrapper (what `biorab run` renders) rather than the
            original's training wrapper, so the model is trained on exactly the prompts it is evaluated on.
        seed: seeds the corpus corruption and every random draw of the builders.
        data_dir: the BioRAB data root (``None``: the staged data).
    """

    dataset: str
    split: str = "train"
    limit: int | None = Field(default=None, ge=1)
    testbed: TestbedKind = "labeled"
    rate: float | None = Field(default=None, ge=0.0, le=1.0)
    retriever: str = "bm25"
    retriever_params: dict[str, Any] = Field(default_factory=dict)
    k: int = Field(default=1, ge=1)
    template: str = "default"
    match_inference: bool = True
    seed: int = 0
    data_dir: str | None = None

    @model_validator(mode="after")
    def _counterfactual_rate(self) -> TrainingSource:
        if self.testbed == "counterfactual" and self.rate is None:
            raise ValueError("the counterfactual testbed needs a rate (0..1)")
        return self

    @property
    def retrieval(self) -> RetrievalSpec:
        """The source's retrieval setting in the RAL core's type (what `biorab.ral.assemble` reads): the
        same fields a run config's retrieval entry declares (``retriever_params`` are its ``params``)."""
        return RetrievalSpec(testbed=self.testbed, rate=self.rate, retriever=self.retriever,
                             params=self.retriever_params, k=self.k, template=self.template)


class LoraParams(Params):
    """The LoRA adapter (the paper's GPU recipe: r=64, alpha=32, dropout 0.1)."""

    r: int = Field(default=8, ge=1)
    alpha: int = Field(default=16, ge=1)
    dropout: float = Field(default=0.0, ge=0.0, lt=1.0)
    target_modules: tuple[str, ...] = ("q_proj", "v_proj")


class EncoderTrainParams(Params):
    """The awareness encoder S of the paper's §4.3.3, trained with the triplet loss.

    Attributes:
        kind: ``sentence`` (a sentence-transformers folder, fully fine-tuned; ``minilm`` is the packaged
            all-MiniLM-L6-v2) or ``llm`` (a causal LM's mean-pooled last hidden state through a LoRA adapter,
            as the paper does with Llama/Phi).
        model: ``minilm`` / a folder for ``sentence``; ``smollm2`` / a folder / a hub id for ``llm``.
        margin: alpha of max(||f(x)-f(p)|| - ||f(x)-f(n)|| + alpha, 0); the paper sets 1.
        negatives: where negatives come from: ``random`` corpus items, ``corrupted`` (the counterfactual
            ledger's items) or ``both``.
        eval_fraction: share of instances held out for ``eval_loss`` / ``eval_accuracy`` (by instance id).
        checkpoint_every: steps between checkpoints (and reports carrying one).
    """

    kind: Literal["sentence", "llm"] = "sentence"
    model: str = "minilm"
    lora: LoraParams = LoraParams()
    margin: float = Field(default=1.0, gt=0.0)
    negatives: Literal["random", "corrupted", "both"] = "both"
    lr: float = Field(default=2e-5, gt=0.0)
    batch_size: int = Field(default=8, ge=1)
    max_steps: int = Field(default=40, ge=1)
    max_length: int = Field(default=64, ge=8)
    eval_fraction: float = Field(default=0.2, ge=0.0, lt=1.0)
    checkpoint_every: int = Field(default=10, ge=1)
    seed: int = 0
    device: str = "cpu"


class PeftTrainParams(Params):
    """PEFT instruction tuning of the generator on retrieval-augmented training texts (the original's
    QLoRA recipe, `docs/training.md`).

    Attributes:
        model: the base model: ``smollm2`` (prepared CPU model), a folder, or a hub id.
        adapter_init: start from this adapter (a folder or ``models:/`` URI), e.g. the triplet-trained
            ``llm`` encoder's adapter, as the paper fine-tunes from the trained f(.).
        quantize: ``nf4`` (4-bit QLoRA; needs CUDA and bitsandbytes), ``none`` (plain LoRA), or ``auto``
            (nf4 where possible, else none).
        max_length: tokens per training text (longer texts are cut from the left of the prompt).
        grad_accum: micro-batches per optimizer step.
    """

    model: str = "smollm2"
    adapter_init: str | None = None
    lora: LoraParams = LoraParams(dropout=0.05)
    quantize: Literal["none", "nf4", "auto"] = "none"
    lr: float = Field(default=2e-4, gt=0.0)
    batch_size: int = Field(default=2, ge=1)
    grad_accum: int = Field(default=1, ge=1)
    max_steps: int = Field(default=20, ge=1)
    max_length: int = Field(default=256, ge=16)
    warmup_ratio: float = Field(default=0.03, ge=0.0, lt=1.0)
    max_grad_norm: float = Field(default=0.3, gt=0.0)
    eval_fraction: float = Field(default=0.2, ge=0.0, lt=1.0)
    checkpoint_every: int = Field(default=10, ge=1)
    seed: int = 0
    device: str = "cpu"
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
