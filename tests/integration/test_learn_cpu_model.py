"""Training with the CPU model (SmolLM2-135M-Instruct, a few steps, short sequences) and the packaged
MiniLM: real loss decreases under pinned seeds, the saved adapter loads in the transformers backend and
changes its generations, `biorab run` evaluates it by ``models:/biorab-ral-adapter@best``, and the trained
encoder tells ledger-corrupted retrieved items from clean ones better than the untrained one."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from biorab.learn import (
    EncoderTrainParams,
    PeftTrainParams,
    TrainingSource,
    build_instruction_set,
    build_triplets,
)

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.full_data, pytest.mark.slow, pytest.mark.timeout(1500),
              pytest.mark.filterwarnings("ignore")]


@pytest.fixture(scope="module")
def adapter(tmp_path_factory: pytest.TempPathFactory, full_data_dir: Path) -> tuple[Path, list[float]]:
    """A LoRA adapter instruction-tuned for 4 full-batch steps on 8 retrieval-augmented ADE texts."""
    from biorab.learn.peft_train import train_adapter

    src = TrainingSource(dataset="ade_corpus_v2", limit=8, k=1, template="bm25", data_dir=str(full_data_dir))
    records = build_instruction_set(src).records
    params = PeftTrainParams(
        model="smollm2",
        batch_size=8,
        max_steps=4,
        lr=3e-3,
        max_length=160,
        eval_fraction=0.0,
        checkpoint_every=4,
        max_grad_norm=1.0,
        lora={"r": 8, "alpha": 16, "dropout": 0.0},
    )
    run = train_adapter(params, records)
    folder = tmp_path_factory.mktemp("adapter") / "adapter"
    run.save(folder)
    return folder, run.result.losses


def test_instruction_tuning_loss_goes_down(adapter: tuple[Path, list[float]]) -> None:
    _, losses = adapter
    print("instruction loss per step:", [round(x, 4) for x in losses])
    assert losses[-1] < losses[0] - 0.05


def test_triplet_loss_goes_down_on_the_cpu_model(data_dir: Path) -> None:
    from biorab.learn.encoder_train import train_encoder

    src = TrainingSource(
        dataset="ade_corpus_v2", limit=4, testbed="counterfactual", rate=0.5, k=1, data_dir=str(data_dir)
    )
    triplets = build_triplets(src, negatives="corrupted", per_anchor=2).triplets
    params = EncoderTrainParams(
        kind="llm",
        model="smollm2",
        batch_size=8,
        max_steps=4,
        lr=1e-3,
        max_length=48,
        eval_fraction=0.0,
        checkpoint_every=4,
        lora={"r": 8, "alpha": 16},
    )
    losses = train_encoder(params, triplets).result.losses
    print("triplet loss per step:", [round(x, 4) for x in losses])
    assert losses[-1] < losses[0] - 0.05


def test_saved_adapter_changes_generations(adapter: tuple[Path, list[float]], data_dir: Path) -> None:
    from biorab.generation.base import SamplingParams
    from biorab.generation.hf.backend import TransformersBackend
    from biorab.ral import render_prompt
    from biorab.tasks import get_template

    template = get_template("ade_corpus_v2", variant="bm25")
    from biorab.datasets import load_dataset

    # Without the template's stop strings and unguided (guided decoding would pick a label either way): the
    # tuned model learned to end its answer with EOS (the target includes it), where the base model runs on,
    # so the free continuations show the adapter at work.
    prompts = [
        dataclasses.replace(render_prompt(template, ex, []), stop=())
        for ex in load_dataset("ade_corpus_v2", "test", data_dir=data_dir)[:4]
    ]
    sampling = SamplingParams(max_tokens=8, temperature=0.0, constrained=False)
    texts = {}
    for name, path in (("base", None), ("tuned", str(adapter[0]))):
        backend = TransformersBackend(
            TransformersBackend.Params(adapter_path=path, dtype="float32", batch_size=4)
        )
        texts[name] = [g.text for g in backend.generate(prompts, sampling)]
        digest = backend.model_digest
        backend.close()
        texts[name + "_digest"] = [digest]
    print(texts)
    assert texts["base_digest"] != texts["tuned_digest"]
    assert texts["base"] != texts["tuned"]


def test_biorab_run_evaluates_the_registered_adapter(
    adapter: tuple[Path, list[float]], data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    from training import tracking

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=uri, registry_uri=uri)
    exp = client.create_experiment("reg", artifact_location=(tmp_path / "art").as_uri())
    run_id = client.create_run(exp).info.run_id
    client.log_artifacts(run_id, str(adapter[0]), artifact_path="model")
    tracking.register(
        client, "biorab-ral-adapter", f"{client.get_run(run_id).info.artifact_uri}/model", run_id, "best"
    )
    config = {
        "name": "tuned",
        "data_dir": str(data_dir),
        "output_dir": str(tmp_path / "runs"),
        "datasets": [{"name": "ade_corpus_v2", "split": "test", "limit": 2}],
        "retrieval": [{"testbed": "labeled", "retriever": "bm25", "k": 1, "template": "bm25"}],
        "backend": {
            "name": "transformers",
            "params": {
                "model": "smollm2",
                "dtype": "float32",
                "adapter_path": "models:/biorab-ral-adapter@best",
            },
        },
        "sampling": {"max_tokens": 4},
        "n_boot": 50,
        "tracking": {"enabled": False},
    }
    path = tmp_path / "tuned.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = {"MLFLOW_TRACKING_URI": uri, "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-m", "biorab.cli.main", "run", str(path), "--no-ray", "--limit", "2"],
        cwd=REPO,
        env={**__import__("os").environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ade_corpus_v2" in out.stdout
    cached = list((Path(__import__("os").environ["BIORAB_CACHE_DIR"]) / "mlflow-models").iterdir())
    assert len(cached) == 1 and (next(cached[0].rglob("adapter_config.json"))).is_file()


def test_encoder_is_scored_on_held_out_items_next_to_the_untrained_one(data_dir: Path) -> None:
    # The job's setting (jobs/tune_encoder.yaml): triplets from the train side of a seeded hash split of the
    # corpus, AUROC/AUPRC on the held-out side only, trained and untrained on the same items. What this test
    # measures and asserts: the held-out items (110, 57 corrupted) and the untrained encoder's AUROC (no
    # training randomness) are pinned; the trained AUROC is printed and only checked to lie in its own CI.
    # Recorded in docs/training.md: untrained 0.518 [0.402, 0.648], trained 0.642 [0.534, 0.747], one run,
    # one seed, 110 items: weak evidence of an improvement, so none is asserted. That the trained weights
    # are the ones scored is tests/integration/test_tune_encoder_scores.py's.
    from biorab.learn.encoder_eval import slice_auroc
    from biorab.learn.encoder_model import new_encoder
    from biorab.learn.encoder_train import train_encoder
    from biorab.learn.holdout import CorpusHoldOut

    train = TrainingSource(
        dataset="ade_corpus_v2", limit=160, testbed="counterfactual", rate=0.5, k=2, data_dir=str(data_dir)
    )
    evaluation = train.model_copy(update={"split": "test", "limit": 60})
    params = EncoderTrainParams(
        kind="sentence",
        model="minilm",
        batch_size=8,
        max_steps=24,
        lr=1e-4,
        max_length=48,
        eval_fraction=0.0,
        checkpoint_every=24,
    )
    hold_out = CorpusHoldOut(fraction=0.3, seed=0)
    triplets = build_triplets(train, hold_out=hold_out)
    assert len(triplets.triplets) == 242 and triplets.held_out is not None
    before = slice_auroc(new_encoder(params), evaluation, hold_out, n_boot=200)
    run = train_encoder(params, triplets.triplets)
    after = slice_auroc(run.encoder, evaluation, hold_out, n_boot=200)
    print(
        f"held-out ledger AUROC on {after.n} items ({after.n_corrupted} corrupted): "
        f"untrained {before.auroc:.3f} {before.auroc_ci}, trained {after.auroc:.3f} {after.auroc_ci}"
    )
    assert (before.n, before.n_corrupted) == (after.n, after.n_corrupted) == (110, 57)
    assert before.auroc == pytest.approx(0.5184, abs=0.005)
    for result in (before, after):
        low, high = result.auroc_ci
        assert low is not None and high is not None and low <= result.auroc <= high
