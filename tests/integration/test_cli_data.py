"""``biorab data stats`` / ``biorab data show`` through the real CLI (subprocess and typer's runner)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from biorab.cli.main import app

REPO = Path(__file__).resolve().parents[2]

# (rows, duplicates) per dataset and split, from the data README.
README_COUNTS = {
    "ade": {"train": (4970, 108), "test": (2130, 13)},
    "chemprot": {"train": (4111, 92), "dev": (2411, 37), "test": (3438, 66)},
    "git": {"train": (3734, 0), "dev": (492, 0), "test": (930, 465)},
    "pharmkg": {"train": (4000, 9), "dev": (500, 0), "test": (500, 0)},
    "hetionet": {"train": (4000, 0), "test": (500, 0)},
    "ade_corpus_v2": {"train": (4000, 143), "dev": (500, 5), "test": (500, 3)},
    "semclass": {"train": (2400, 13), "test": (600, 0)},
    "medmcqa": {"train": (4000, 0), "test": (4183, 0)},
}


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "biorab.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.mark.full_data  # pinned on the full staged data (../shared/data)
def test_stats_json_reports_the_readme_counts(data_dir: Path) -> None:
    result = _cli("data", "stats", "--json", "--data-dir", str(data_dir))
    assert result.returncode == 0, result.stderr
    datasets = json.loads(result.stdout)["datasets"]
    counts = {
        name: {split: (s["rows"], s["duplicates"]) for split, s in splits.items()}
        for name, splits in datasets.items()
    }
    assert counts == README_COUNTS
    assert datasets["ade"]["train"]["labels"] == {"effect": 4779, "dosage": 191}
    assert datasets["pharmkg"]["test"]["labels"] == {
        "Interactions": 290,
        "Disease-Gene": 112,
        "Disease-Chemical": 62,
        "Chemical-Gene": 36,
    }
    assert datasets["medmcqa"]["test"]["labels"] == {"(A)": 1348, "(B)": 1085, "(C)": 925, "(D)": 825}
    assert set(datasets["git"]["test"]) == {"rows", "labels", "duplicates"}


def _tiny_root(root: Path) -> Path:
    (root / "ade").mkdir(parents=True)
    rows = [
        {"text": "s1", "label": "a|effect|b"},
        {"text": "s1", "label": "a|effect|b"},
        {"text": "s2", "label": "a|dosage|c"},
    ]
    for file in ("triplet_extraction_ade_train.json", "test.derived.jsonl"):
        (root / "ade" / file).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


def test_stats_reads_the_data_dir_from_the_environment(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "stats", "--json", "-d", "ade"], env={"BIORAB_DATA_DIR": str(_tiny_root(tmp_path))}
    )
    assert result.exit_code == 0, result.output
    split = {"rows": 3, "labels": {"effect": 2, "dosage": 1}, "duplicates": 1}
    assert json.loads(result.stdout) == {"datasets": {"ade": {"train": split, "test": split}}}


def test_stats_table(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "stats", "-d", "ade", "--data-dir", str(_tiny_root(tmp_path))], env={"COLUMNS": "120"}
    )
    assert result.exit_code == 0, result.output
    assert "dataset" in result.stdout and "duplicates" in result.stdout
    assert "effect 2, dosage 1" in result.stdout


def test_show_json_rows(data_dir: Path) -> None:
    args = ["data", "show", "ade", "--split", "test", "--limit", "2", "--offset", "1", "--json"]
    result = CliRunner().invoke(app, [*args, "--data-dir", str(data_dir)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in rows] == ["ade/test/1", "ade/test/2"]
    assert rows[0]["label"] == "propylthiouracil|effect|submassive hepatic necrosis"
    assert rows[0]["fields"] == {"sentence": rows[0]["text"]} and rows[0]["source_line"] == 2


def test_show_prints_text_verbatim(data_dir: Path) -> None:
    result = CliRunner().invoke(
        app, ["data", "show", "semclass", "-n", "1", "--data-dir", str(data_dir)], env={"COLUMNS": "400"}
    )
    assert result.exit_code == 0, result.output
    # Square brackets in the sentence are data, not rich markup.
    assert "[Action of methemoglobin on cytochrome oxidases inhibited by cyanides]." in result.stdout
    assert "semclass/test/0" in result.stdout


def test_show_byo_with_params_file(tmp_path: Path) -> None:
    (tmp_path / "nli.jsonl").write_text(
        json.dumps({"p": "P", "h": "H", "gold": "entailment"}) + "\n", encoding="utf-8"
    )
    params = tmp_path / "byo.yaml"
    params.write_text(
        "task: nli\nfiles: {test: nli.jsonl}\nfields: {premise: p, hypothesis: h, label: gold}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["data", "show", "byo", "--params", str(params), "--json", "--data-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["text"] == "Premise: P\nHypothesis: H"


@pytest.mark.parametrize(("args", "message"), [
    (["data", "show", "ade", "--split", "dev"], "error: key 'split': dataset 'ade' has no split 'dev'"),
    (["data", "show", "chemprott"], "Did you mean 'chemprot'?"),
    (["data", "stats", "--data-dir", "/nonexistent/x"], "data folder /nonexistent/x does not exist"),
])  # fmt: skip
def test_errors_exit_2_with_a_message(data_dir: Path, args: list[str], message: str) -> None:
    result = _cli(*args, env={"BIORAB_DATA_DIR": str(data_dir)})
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_malformed_file_error_names_file_line_and_field(tmp_path: Path) -> None:
    root = _tiny_root(tmp_path)
    (root / "ade/test.derived.jsonl").write_text(
        '{"text": "s", "label": "a|effect|b"}\n{"text": "s"}\n', encoding="utf-8"
    )
    result = _cli("data", "stats", "-d", "ade", "--data-dir", str(root))
    assert result.returncode == 2
    assert f"error: {root / 'ade/test.derived.jsonl'}, line 2, field 'label': missing field" in result.stderr


def test_stats_of_a_bring_your_own_dataset(tmp_path: Path) -> None:
    (tmp_path / "sdoh.csv").write_text(
        "note,lab\nshe lives alone,yes\nhe is homeless,no\nshe lives alone,yes\n", encoding="utf-8"
    )
    params = tmp_path / "sdoh.yaml"
    params.write_text(
        'name: sdoh\ntask: classification\nfiles: {test: sdoh.csv}\nfields: {text: note, label: lab}\n'
        'labels: ["yes", "no"]\n',
        encoding="utf-8",
    )
    args = ["data", "stats", "-d", "byo", "--params", str(params), "--data-dir", str(tmp_path), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    split = {"rows": 3, "labels": {"yes": 2, "no": 1}, "duplicates": 1}
    assert json.loads(result.stdout) == {"datasets": {"sdoh": {"test": split}}}
    # Unquoted YAML yes/no are booleans: the error names the params file and the key.
    params.write_text(params.read_text(encoding="utf-8").replace('["yes", "no"]', "[yes, no]"), "utf-8")
    result = _cli(*args)
    assert result.returncode == 2
    assert f"error: {params}, key 'labels.0': Input should be a valid string" in result.stderr
    result = _cli("data", "stats", "--params", str(params))
    assert result.returncode == 2 and "--params needs exactly one --dataset" in result.stderr
