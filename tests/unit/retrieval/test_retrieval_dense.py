"""Dense retrieval: the contriever (mean pooling) and MedCPT (asymmetric, [CLS]) code paths run on small
random-init BERT models built from a config and saved into tmp_path; search equals brute-force numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from biorab.common.errors import RetrievalError  # noqa: E402
from biorab.common.records import CorpusItem  # noqa: E402
from biorab.retrieval import build_retriever  # noqa: E402
from biorab.retrieval.dense import DenseParams, encoder_specs  # noqa: E402

WORDS = ["aspirin", "ibuprofen", "fever", "pain", "headache", "bleeding", "ulcer", "heart", "blood", "pumps"]
WORDS += ["reduces", "causes", "treats", "the", "a", "of"]
DOCS = [
    "aspirin reduces fever",
    "aspirin causes bleeding",
    "ibuprofen treats pain",
    "the heart pumps blood",
    "aspirin reduces fever",  # duplicate of d0
    "ulcer of the heart",
]


def _tiny_bert(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    config = transformers.BertConfig(
        vocab_size=5 + len(WORDS),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    torch.manual_seed(seed)
    transformers.BertModel(config).save_pretrained(folder)
    transformers.BertTokenizer(vocab_file=str(vocab)).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tiny-bert")
    return _tiny_bert(root / "query", 0), _tiny_bert(root / "article", 1)


def _items() -> list[CorpusItem]:
    return [CorpusItem(f"d{i}", text, f"v{i % 4}", "toy", "qa") for i, text in enumerate(DOCS)]


def _embed(folder: Path, texts: list[str], pooling: str, normalize: bool) -> np.ndarray:
    """Reference pooling, written independently of biorab.retrieval.encoders."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder).eval()
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state.numpy()
    mask = batch["attention_mask"].numpy()[..., None]
    pooled = hidden[:, 0] if pooling == "cls" else (hidden * mask).sum(1) / mask.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True) if normalize else pooled


def test_contriever_mean_pooling_equals_bruteforce(models: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = models
    retriever = build_retriever("dense", {"encoder": "contriever", "model": str(folder)}, cache_root=tmp_path)
    retriever.index(_items())
    queries = {"q0": "aspirin fever", "q1": "heart blood", "q2": "pain"}
    hits = retriever.search(queries, 3)
    docs = _embed(folder, DOCS, "mean", True)
    for qid, text in queries.items():
        scores = docs @ _embed(folder, [text], "mean", True)[0]
        scores[4] = -np.inf  # d4 duplicates d0 and is de-duplicated away
        expected = list(np.argsort(-scores, kind="stable")[:3])
        assert [h.doc_id for h in hits[qid]] == [f"d{i}" for i in expected]
        assert [h.score for h in hits[qid]] == pytest.approx([float(scores[i]) for i in expected], abs=1e-5)


def test_medcpt_is_asymmetric_with_cls_pooling(models: tuple[Path, Path], tmp_path: Path) -> None:
    query_model, article_model = models
    params = {"encoder": "medcpt", "query_model": str(query_model), "doc_model": str(article_model)}
    query_spec, doc_spec = encoder_specs(DenseParams(**params))
    assert (query_spec.pooling, doc_spec.pooling, query_spec.max_length, doc_spec.max_length) == (
        "cls",
        "cls",
        64,
        512,
    )
    retriever = build_retriever("dense", {**params, "dedupe": False}, cache_root=tmp_path)
    retriever.index(_items())
    hits = retriever.search({"q": "aspirin headache"}, len(DOCS))["q"]
    scores = (
        _embed(article_model, DOCS, "cls", False) @ _embed(query_model, ["aspirin headache"], "cls", False)[0]
    )
    by_id = {h.doc_id: h.score for h in hits}
    assert by_id == pytest.approx({f"d{i}": float(s) for i, s in enumerate(scores)}, abs=1e-4)
    # The query encoder alone on both sides would rank differently: the two models are really used.
    symmetric = (
        _embed(query_model, DOCS, "cls", False) @ _embed(query_model, ["aspirin headache"], "cls", False)[0]
    )
    assert not np.allclose(symmetric, scores)


def test_keep_ties_returns_duplicates_collapsed(models: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = models
    items = [
        CorpusItem("a", "aspirin fever", "x", "t", "qa"),
        CorpusItem("b", "aspirin fever", "y", "t", "qa"),
        CorpusItem("c", "aspirin fever", "x", "t", "qa"),
        CorpusItem("d", "heart", "x", "t", "qa"),
    ]
    retriever = build_retriever(
        "dense", {"encoder": "contriever", "model": str(folder), "keep_ties": True}, cache_root=tmp_path
    )
    retriever.index(items)
    assert [h.doc_id for h in retriever.search({"q": "aspirin fever"}, 1)["q"]] == ["a", "b"]


def test_index_and_embeddings_are_reused(models: tuple[Path, Path], tmp_path: Path) -> None:
    folder, other = models
    params = {"encoder": "contriever", "model": str(folder)}
    first = build_retriever("dense", params, cache_root=tmp_path)
    first.index(_items())
    assert not first.loaded_from_cache and (first.index_path / "index.faiss").is_file()
    assert len(list((tmp_path / "embeddings").rglob("*.npy"))) == 1
    again = build_retriever("dense", params, cache_root=tmp_path)
    again.index(_items())
    assert again.loaded_from_cache
    assert again.search({"q": "pain"}, 2) == first.search({"q": "pain"}, 2)
    swapped = build_retriever("dense", {**params, "model": str(other)}, cache_root=tmp_path)
    assert swapped.fingerprint != first.fingerprint  # the weights are part of the fingerprint


def test_hnsw_finds_the_exact_neighbours_on_a_small_corpus(models: tuple[Path, Path], tmp_path: Path) -> None:
    folder, _ = models
    flat = build_retriever("dense", {"encoder": "contriever", "model": str(folder)}, cache_root=tmp_path)
    hnsw = build_retriever(
        "dense", {"encoder": "contriever", "model": str(folder), "index_type": "hnsw"}, cache_root=tmp_path
    )
    for retriever in (flat, hnsw):
        retriever.index(_items())
    queries = {"q0": "aspirin", "q1": "heart", "q2": "bleeding ulcer"}
    assert hnsw.search(queries, 2) == flat.search(queries, 2)


def test_missing_model_path_is_a_clear_error(tmp_path: Path) -> None:
    retriever = build_retriever("dense", {"model": str(tmp_path / "no-such-model")}, cache_root=tmp_path)
    with pytest.raises(RetrievalError, match="does not exist"):
        retriever.index(_items())


def test_unreachable_hub_id_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty hub cache
    retriever = build_retriever("dense", {"encoder": "contriever"}, cache_root=tmp_path)
    with pytest.raises(RetrievalError, match="could not load encoder .facebook/contriever.: no local folder"):
        retriever.index(_items())


@pytest.mark.slow
def test_packaged_minilm_retrieves_the_paraphrase(tmp_path: Path) -> None:
    retriever = build_retriever("dense", cache_root=tmp_path)
    retriever.index(_items())
    hits = retriever.search({"q": "which drug lowers a temperature"}, 1)["q"]
    assert hits[0].doc_id == "d0" and 0.3 < hits[0].score <= 1.0


def _hub_cache(root: Path, repo_id: str, model: Path) -> None:
    """Lay `model`'s files out as the hub cache holds a downloaded ``repo_id`` (refs/main -> snapshot)."""
    import shutil

    repo = root / "hub" / ("models--" + repo_id.replace("/", "--"))
    commit = "0" * 40
    shutil.copytree(model, repo / "snapshots" / commit)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)


def test_presets_load_contriever_and_medcpt_by_hub_id(models: tuple[Path, Path], tmp_path: Path) -> None:
    """No model override: the presets' hub ids load (offline, from a hub cache holding tiny random BERTs),
    and MedCPT really uses its query encoder for queries and its article encoder for corpus items."""
    import json
    import os
    import subprocess
    import sys

    query_model, article_model = models
    _hub_cache(tmp_path / "hf", "facebook/contriever", query_model)
    _hub_cache(tmp_path / "hf", "ncbi/MedCPT-Query-Encoder", query_model)
    _hub_cache(tmp_path / "hf", "ncbi/MedCPT-Article-Encoder", article_model)
    code = (
        "import json, sys\n"
        "from biorab.common.records import CorpusItem\n"
        "from biorab.retrieval import build_retriever\n"
        f"docs = {DOCS!r}\n"
        "items = [CorpusItem(f'd{i}', t, 'v', 'toy', 'qa') for i, t in enumerate(docs)]\n"
        "out = {}\n"
        "for name in ('contriever', 'medcpt'):\n"
        "    params = {'encoder': name, 'dedupe': False}\n"
        f"    r = build_retriever('dense', params, cache_root={str(tmp_path)!r})\n"
        "    r.index(items)\n"
        "    out[name] = {h.doc_id: h.score for h in r.search({'q': 'aspirin headache'}, len(docs))['q']}\n"
        "print(json.dumps(out))\n"
    )
    # HF_HOME is read when huggingface_hub is imported, hence a fresh interpreter.
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    query = ["aspirin headache"]
    contriever = _embed(query_model, DOCS, "mean", True) @ _embed(query_model, query, "mean", True)[0]
    medcpt = _embed(article_model, DOCS, "cls", False) @ _embed(query_model, query, "cls", False)[0]
    assert got["contriever"] == pytest.approx({f"d{i}": float(s) for i, s in enumerate(contriever)}, abs=1e-4)
    assert got["medcpt"] == pytest.approx({f"d{i}": float(s) for i, s in enumerate(medcpt)}, abs=1e-4)
