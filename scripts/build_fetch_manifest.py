"""Write `biorab/fetching/fetch_manifest.json` from a staged data folder and the sources its READMEs name.

Run from the repository root whenever the staged data changes:

    python scripts/build_fetch_manifest.py --data ../shared/data

The table below is the READMEs' "Sources" sections in machine form: for each staged file, the public
repository, pinned commit and path it was copied from (`url`), or how the project rebuilds it from other
manifest files (`derive`), or the upstream folder whose files it is assembled from (`parts`), or why it can
only come from a mirror (`mirror_only`). sha256 and sizes are read from the staged files, so
`biorab data fetch` installs exactly the bytes the tests were run on.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "biorab" / "fetching" / "fetch_manifest.json"

SOURCES: dict[str, dict[str, str]] = {
    "BIORAB": {"repo": "ToneLi/ToneLi-Evaluating-Retrival-LLM-in-Biomedical-Domain",
               "commit": "3f8f3a35e02625aca269bf7c5a43a5de7ab31c63", "licence": "no licence file"},
    "BIOMEDRAG": {"repo": "ToneLi/BIoMedRAG", "commit": "899fc27f7849ed767f466ca125b1a47d0c0cca20",
                  "licence": "no licence file"},
    "SEMMED": {"repo": "ToneLi/SemMedDB", "commit": "cfde188d44c1bc46723d8d350c9dc0595f4a2083",
               "licence": "no licence file; sentences from SemMedDB (UMLS licence terms)"},
    "PHARMKG": {"repo": "biomed-AI/PharmKG", "commit": "a7daec6b4d6c785c157b8cf693a4651756cb8647",
                "licence": "no licence file"},
    "HETIO": {"repo": "hetio/hetionet", "commit": "0009918ab3ecfe15ef8aeb9437f117e72d96f668",
              "licence": "CC0 1.0 (original content)"},
    "DRUGMECHDB": {"repo": "SuLab/DrugMechDB", "commit": "05b8f644aa50136c6b086c536b8c0b4a4a1470a2",
                   "licence": "MIT (Copyright (c) 2019 Su Lab)"},
    "DRUGMECHDB_AGENTIC": {"repo": "SuLab/DrugMechDB-agentic",
                           "commit": "b83cc5ddb6803ed4fb32a5355150d0469647f904",
                           "licence": "CC0 1.0 Universal"},
    "DRUGMECHCF": {"repo": "czi-ai/DrugMechCounterfactuals",
                   "commit": "e91bd964aa7d89836db3186e7bdbc85268850f3b",
                   "licence": "MIT (Copyright (c) 2024 czi-ai)"},
}

_DIVERSITY = "data/diversity_data_base/"
_HETIO_PROMPTS = [f"hetionet5k_lp_{split}_instruction_{kind}.json" for split in ("train", "test")
                  for kind in ("bm25", "contriever", "instructor", "noexample", "random")]

# staged path -> (source key, path in the source repository); ".gz" staged files are gzipped copies.
ORIGINALS: dict[str, tuple[str, str]] = {
    **{f"biorab/{d}/{f}": ("BIORAB", _DIVERSITY + f) for d, f in [
        ("ade", "triplet_extraction_ade_train.json"), ("chemprot", "triplet_extraction_chemprot_train.json"),
        ("git", "triplet_extraction_git_train.json"), ("pharmkg", "link_predcition_pharmkg_train_4000.json"),
        ("hetionet", "link_predcition_hetionet_train.json"),
        ("ade_corpus_v2", "classification_ade_corpus_v2_train.json"),
        ("semclass", "classification_semmed_train.json"), ("medmcqa", "MedMCQA_train_4000.json")]},
    "biorab/ade/test_instruction_container.json":
        ("BIORAB", "data/triple_extraction/output_files/ade/test_instruction_container.json"),
    "biorab/git/test_instruction_container.json":
        ("BIORAB", "data/triple_extraction/output_files/GIT/test_instruction_container.json"),
    **{f"biorab/ade_corpus_v2/full_split/ade_corpus_v2_{s}.json":
       ("BIORAB", f"data/ade_V2_classification/ade_corpus_v2_{s}.json") for s in ("train", "test")},
    **{f"biorab/{d}/prompts/{f}": ("BIORAB", f"data/classification_data/{f}") for d, f in [
        ("ade_corpus_v2", "ade_corpus_v2_test_bm25.jsonl"),
        ("ade_corpus_v2", "contriever_ade_test_instruction_container.json"),
        ("semclass", "sentence_triple_train_bm25.jsonl"), ("semclass", "sentence_triple_test_bm25.jsonl")]},
    **{f"biorab/medmcqa/{f}": ("BIORAB", f"data/MedMCQA/{f}") for f in ("dev.json", "test.json")},
    **{f"biorab/hetionet/prompts/{f}" + (".gz" if "_train_" in f else ""):
       ("BIORAB", f"model/link_prediction/{f}") for f in _HETIO_PROMPTS},
    **{f"biorab/chemprot/{f}": ("BIOMEDRAG", f"dataset/2_chemprot/{f}") for f in (
        "train_triples.json", "dev_triples.json", "test_triples.json", "rel2id.json",
        "chem_relation_diecription.txt")},
    **{f"biorab/chemprot/raw/{s}.jsonl.gz": ("BIOMEDRAG", f"dataset/2_chemprot/{s}.jsonl")
       for s in ("train", "valid", "test")},
    **{f"biorab/git/renew_triplet_T_{s}.jsonl": ("BIOMEDRAG", f"dataset/0_GM-CIHT/renew_triplet_T_{s}.jsonl")
       for s in ("train", "dev", "test")},
    **{f"biorab/ade_corpus_v2/{f}": ("BIOMEDRAG", f"dataset/ade_classification/{f}")
       for f in ("ade_corpus_v2_train_4000.json", "ade_corpus_v2_test.json")},
    **{f"biorab/semclass/{f}": ("SEMMED", f"data_progress/final_data/{f}")
       for f in ("sentence_triple.jsonl", "sentence_triple_train.jsonl", "sentence_triple_test.jsonl")},
    "biorab/semclass/raw/sentence_triple_yes_no.csv":
        ("SEMMED", "data_progress/data/sentence_triple_yes_no.csv"),
    **{f"biorab/pharmkg/PharmKG-8k/{f}": ("PHARMKG", f"data/PharmKG-8k/{f}")
       for f in ("test.tsv", "valid.tsv")},
    "biorab/hetionet/metaedges.tsv": ("HETIO", "describe/edges/metaedges.tsv"),
    "drugmechdb/deprecated_ids.txt": ("DRUGMECHDB", "utils/deprecated_ids.txt"),
}

# staged path -> (builder in biorab.fetching.derive, input paths)
DERIVED: dict[str, tuple[str, list[str]]] = {
    "biorab/ade/test.derived.jsonl": ("context_response", ["biorab/ade/test_instruction_container.json"]),
    "biorab/hetionet/test.derived.json":
        ("context_response", ["biorab/hetionet/prompts/hetionet5k_lp_test_instruction_noexample.json"]),
    "biorab/ade_corpus_v2/dev_500.derived.json":
        ("rows_500_to_999", ["biorab/ade_corpus_v2/full_split/ade_corpus_v2_test.json"]),
    **{f"biorab/pharmkg/reconstructed/{split}_500.json": (f"pharmkg_{split}_500", [
        "biorab/pharmkg/link_predcition_pharmkg_train_4000.json", "biorab/pharmkg/PharmKG-8k/test.tsv",
        "biorab/pharmkg/PharmKG-8k/valid.tsv"]) for split in ("test", "dev")},
}

# staged path -> (source key, folder in the source repository, packaged sha256 list of its files). The file
# is assembled from the folder's files by biorab/fetching/drugmechdb_paths.py; the list is written (and the
# rebuild checked byte-identical) by scripts/check_drugmechdb_rebuild.py --write-list.
ASSEMBLED: dict[str, tuple[str, str, str]] = {
    "drugmechdb/indication_paths.yaml": ("DRUGMECHDB_AGENTIC", "kb/paths/", "drugmechdb_kb_paths.sha256.gz"),
}

# staged path -> why no public source can give these bytes (none at present).
MIRROR_ONLY: dict[str, str] = {}


def _release_files(data: Path) -> dict[str, tuple[str, str]]:
    release = sorted(p.name for p in (data / "drugmechcf" / "release").iterdir())
    return {f"drugmechcf/release/{f}": ("DRUGMECHCF", f"Data/Counterfactuals/{f}") for f in release}


def _entry(data: Path, path: str, originals: dict[str, tuple[str, str]]) -> dict[str, object]:
    raw = (data / path).read_bytes()
    entry: dict[str, object] = {"path": path, "size": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    if path in originals:
        key, source_path = originals[path]
        src = SOURCES[key]
        entry.update(source=key, url=f"https://raw.githubusercontent.com/{src['repo']}/{src['commit']}/"
                     f"{source_path}")
        if path.endswith(".gz") and not source_path.endswith(".gz"):
            # the download is verified before compressing, against the staged file's content
            entry.update(transform="gzip", source_sha256=hashlib.sha256(gzip.decompress(raw)).hexdigest())
    elif path in DERIVED:
        builder, inputs = DERIVED[path]
        entry["derive"] = {"builder": builder, "inputs": inputs}
    elif path in ASSEMBLED:
        key, folder, listed = ASSEMBLED[path]
        src = SOURCES[key]
        entry.update(source=key, parts={
            "base_url": f"https://raw.githubusercontent.com/{src['repo']}/{src['commit']}/{folder}",
            "sha256_list": listed})
    elif path in MIRROR_ONLY:
        entry["mirror_only"] = MIRROR_ONLY[path]
    else:
        raise SystemExit(f"error: {path}: no source, derivation or mirror-only reason in this script")
    return entry


def build(data: Path) -> dict[str, object]:
    """The manifest of every data file of `data` except the READMEs and the DrugMech golden fixtures."""
    originals = {**ORIGINALS, **_release_files(data)}
    paths = sorted(str(p.relative_to(data)) for group in ("biorab", "drugmechdb", "drugmechcf/release")
                   for p in (data / group).rglob("*") if p.is_file() and p.name != "README.md")
    return {"sources": SOURCES, "files": [_entry(data, p, originals) for p in paths]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    manifest = build(args.data)
    args.out.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(manifest['files'])} files")  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
