"""`biorab score` and `biorab compare` end to end on small files written to tmp_path (JSON pinned)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from biorab.cli.main import main

SEMCLASS_ROWS = [  # gold, generation -> robust / strict_original parse
    ("y", "y"),  # y / y
    ("y", "Answer: n"),  # n / failure
    ("n", "n"),  # n / n
    ("n", "I cannot decide."),  # failure / failure
    ("y", " y\n\n### Explanation: the sentence states the relation"),  # y / failure
    ("n", "y"),  # y / y
]
ADE_ROWS = [
    ("Aspirin|effect|bleeding", "Aspirin|effect|bleeding\nibuprofen|effect|rash"),  # 2 triples / failure
    ("drugX|dosage|10 mg", "drugx|dosage|10 mg"),
    ("a|effect|b", "no triple here"),  # failure in both modes
]
MEDMCQA_ROWS = [
    ("(A)", "(A)", {"(A)": 0.7, "(B)": 0.1, "(C)": 0.1, "(D)": 0.1}),
    ("(B)", "(B) Atrophy", {"(A)": 0.1, "(B)": 0.6, "(C)": 0.2, "(D)": 0.1}),
    ("(C)", "The answer is (D).", {"(A)": 0.05, "(B)": 0.05, "(C)": 0.4, "(D)": 0.5}),
    ("(D)", "none of these", {"(A)": 0.25, "(B)": 0.25, "(C)": 0.25, "(D)": 0.25}),
]


def _write(path: Path, task: str, dataset: str, rows: list[tuple]) -> Path:
    lines = []
    for i, (gold, generation, *scores) in enumerate(rows):
        row = {"id": f"{dataset}/test/{i}", "task": task, "gold": gold, "generation": generation}
        if scores:
            row["scores"] = scores[0]
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["biorab", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _assert_report(payload: dict, expected: dict[str, float], n: int, failures: int) -> None:
    assert set(payload) == {"metrics", "n", "parse_failures"}
    assert (payload["n"], payload["parse_failures"]) == (n, failures)
    assert list(payload["metrics"]) == list(expected)
    for name, value in expected.items():
        entry = payload["metrics"][name]
        assert set(entry) == {"value", "ci_low", "ci_high"}
        assert entry["value"] == pytest.approx(value, abs=1e-12), name


def test_classification_json_robust_and_strict(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _write(tmp_path / "semclass.jsonl", "classification", "semclass", SEMCLASS_ROWS)
    args = ("score", path, "--task", "classification", "--dataset", "semclass", "--json", "--n-boot", "0")
    code, out, _ = _run(monkeypatch, capsys, *args)
    assert code == 0
    payload = json.loads(out)
    # Robust: predictions y, n, n, -, y, y. Label y: P 2/3 R 2/3 F1 2/3; label n: P 1/2 R 1/3 F1 0.4.
    expected = {
        "accuracy": 0.5, "precision": 0.5, "recall": 0.5, "f1": 0.5,
        "micro_precision": 0.5, "micro_recall": 0.5, "micro_f1": 0.5,
        "macro_precision": 7 / 12, "macro_recall": 0.5, "macro_f1": 8 / 15,
        "weighted_precision": 7 / 12, "weighted_recall": 0.5, "weighted_f1": 8 / 15,
        "parse_failure_rate": 1 / 6,
    }  # fmt: skip
    _assert_report(payload, expected, n=6, failures=1)
    assert payload["metrics"]["accuracy"]["ci_low"] is None
    code, out, _ = _run(monkeypatch, capsys, "score", path, "--task", "classification", "--parser",
                        "strict_original", "--json", "--n-boot", "0")  # fmt: skip
    payload = json.loads(out)
    assert (payload["parse_failures"], payload["metrics"]["accuracy"]["value"]) == (3, pytest.approx(1 / 3))


def test_triples_json_both_parsers(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _write(tmp_path / "ade.jsonl", "triple_extraction", "ade", ADE_ROWS)
    args = ("score", path, "--task", "triple_extraction", "--dataset", "ade", "--json", "--n-boot", "0")
    code, out, _ = _run(monkeypatch, capsys, *args)
    assert code == 0
    expected = {
        "precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3,
        "head_precision": 2 / 3, "head_recall": 2 / 3, "head_f1": 2 / 3,
        "relation_precision": 1.0, "relation_recall": 2 / 3, "relation_f1": 0.8,
        "tail_precision": 2 / 3, "tail_recall": 2 / 3, "tail_f1": 2 / 3,
        "parse_failure_rate": 1 / 3,
    }  # fmt: skip
    _assert_report(json.loads(out), expected, n=3, failures=1)
    # strict_original: a response with two lines predicts nothing, as in 5_metrics.py.
    _, out, _ = _run(monkeypatch, capsys, *args, "--parser", "strict_original")
    strict = json.loads(out)["metrics"]
    assert (strict["precision"]["value"], strict["recall"]["value"]) == (1.0, pytest.approx(1 / 3))
    assert strict["f1"]["value"] == pytest.approx(0.5)


def test_qa_with_scores_gives_auroc_and_bootstrap_is_seeded(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _write(tmp_path / "medmcqa.jsonl", "qa", "medmcqa", MEDMCQA_ROWS)
    args = ("score", path, "--task", "qa", "--dataset", "medmcqa", "--json", "--n-boot", "200", "--seed", "3")
    code, out, _ = _run(monkeypatch, capsys, *args)
    assert code == 0
    metrics = json.loads(out)["metrics"]
    assert metrics["accuracy"]["value"] == 0.5
    assert metrics["auroc"]["value"] == pytest.approx(11 / 12)  # per label 1, 1, 1, 2/3
    assert metrics["auprc"]["value"] == pytest.approx(0.875)  # per label 1, 1, 1, 1/2
    assert metrics["accuracy"]["ci_low"] <= 0.5 <= metrics["accuracy"]["ci_high"]
    assert _run(monkeypatch, capsys, *args)[1] == out


def test_table_output(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _write(tmp_path / "semclass.jsonl", "classification", "semclass", SEMCLASS_ROWS)
    code, out, _ = _run(monkeypatch, capsys, "score", path, "--task", "classification", "--n-boot", "50")
    assert code == 0
    assert "macro_f1" in out and "0.5333" in out and "95% CI" in out
    assert "n = 6, parse failures = 1" in out
    assert "skipped auroc: 6 of 6 predictions have no per-label scores" in out


@pytest.mark.parametrize(
    ("line2", "message"),
    [
        (b'{"id": "x", "task": "classification"', "line 2: not valid JSON"),
        (b'{"id": "x", "task": "classification", "gold": "y"}', "line 2, field 'generation': missing field"),
        (b'{"id": "x", "task": "nli2", "gold": "y", "generation": "y"}', "line 2, field 'task': unknown"),
        (b'{"id": "x", "task": "qa", "gold": "y", "generation": "y"}', "field 'task': task 'qa' differs"),
        (b'{"id": "caf\xe9", "task": "classification"}', "line 2: not valid UTF-8"),
        (b'{"id": "semclass/test/0", "task": "classification", "gold": "n", "generation": "n"}',
         "line 2, field 'id': duplicate id 'semclass/test/0' (first on line 1, again on line 2)"),
        (b'{"id": "x", "task": "classification", "gold": "maybe", "generation": "y"}',
         "line 2, field 'gold': gold label 'maybe' is not in the label set ['y', 'n']"),
    ],
)  # fmt: skip
def test_bad_rows_exit_2_naming_file_and_line(
    tmp_path: Path, monkeypatch, capsys, line2: bytes, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    first = b'{"id": "semclass/test/0", "task": "classification", "gold": "y", "generation": "y"}'
    path.write_bytes(first + b"\n" + line2 + b"\n")
    code, out, err = _run(
        monkeypatch, capsys, "score", path, "--task", "classification", "--dataset", "semclass"
    )
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {path}, ")
    assert message in err


def test_bad_options_exit_2(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _write(tmp_path / "semclass.jsonl", "classification", "semclass", SEMCLASS_ROWS)
    code, _, err = _run(monkeypatch, capsys, "score", path, "--task", "classify")
    assert code == 2 and "unknown task 'classify'" in err
    code, _, err = _run(monkeypatch, capsys, "score", path, "--task", "classification", "--parser", "loose")
    assert code == 2 and "unknown parser mode 'loose'" in err
    code, _, err = _run(monkeypatch, capsys, "score", path, "--task", "classification", "--labels", "y,n",
                        "--dataset", "semclass")  # fmt: skip
    assert code == 2 and "not both" in err


def test_compare_two_files(tmp_path: Path, monkeypatch, capsys) -> None:
    a = _write(tmp_path / "a.jsonl", "classification", "semclass", SEMCLASS_ROWS)
    b = _write(tmp_path / "b.jsonl", "classification", "semclass", [(g, g) for g, _ in SEMCLASS_ROWS])
    args = ("compare", a, b, "--task", "classification", "--dataset", "semclass", "--json", "--n-boot", "100")
    code, out, _ = _run(monkeypatch, capsys, *args)
    assert code == 0
    result = json.loads(out)
    assert (result["metric"], result["value_a"], result["value_b"], result["delta"]) == (
        "micro_f1",
        0.5,
        1.0,
        0.5,
    )
    # A is right on 3 instances that B also gets right; B alone is right on 3: exact p = 2 / 2^3.
    assert result["mcnemar"] == {
        "only_a": 0,
        "only_b": 3,
        "statistic": 0.0,
        "p_value": 0.25,
        "method": "exact",
    }
    assert 0 < result["ci_low"] <= 0.5 <= result["ci_high"]
    code, _, err = _run(monkeypatch, capsys, "compare", a, tmp_path / "a.jsonl", "--task", "classification",
                        "--metric", "auroc")  # fmt: skip
    assert code == 2 and "cannot compare" in err


def test_strict_parser_scores_triples_with_the_original_element_rule(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    rows = [("a|effect|b", "a | effect | b"), ("c|dosage|d", "c|dosage|d")]
    path = _write(tmp_path / "ade.jsonl", "triple_extraction", "ade", rows)
    args = ("score", path, "--task", "triple_extraction", "--json", "--n-boot", "0")
    _, out, _ = _run(monkeypatch, capsys, *args, "--parser", "strict_original")
    strict = json.loads(out)["metrics"]
    # 5_metrics.py keeps the spaces around the predicted relation: " effect " is not "effect".
    values = (strict["f1"]["value"], strict["relation_f1"]["value"], strict["head_f1"]["value"])
    assert values == (0.5, 0.5, 1.0)
    _, out, _ = _run(monkeypatch, capsys, *args)
    assert json.loads(out)["metrics"]["f1"]["value"] == 1.0
    # compare uses the same rule: B (spaces removed) beats A only under strict_original.
    other = _write(tmp_path / "b.jsonl", "triple_extraction", "ade", [(g, g) for g, _ in rows])
    for parser, delta in (("strict_original", 0.5), ("robust", 0.0)):
        compare_args = ("compare", path, other, "--task", "triple_extraction", "--parser", parser, "--json")
        _, out, _ = _run(monkeypatch, capsys, *compare_args, "--n-boot", "0")
        assert json.loads(out)["delta"] == delta


def test_qa_without_a_label_set_parses_every_option_letter(tmp_path: Path, monkeypatch, capsys) -> None:
    rows = [("(A)", "(A)"), ("(B)", "The answer is (D)."), ("(B)", "no idea")]
    path = _write(tmp_path / "qa.jsonl", "qa", "mcq", rows)
    for parser in ("robust", "strict_original"):
        args = ("score", path, "--task", "qa", "--parser", parser, "--json", "--n-boot", "0")
        code, out, _ = _run(monkeypatch, capsys, *args)
        payload = json.loads(out)
        # "(D)" is a wrong answer (no gold uses D), not a parse failure; only "no idea" fails to parse.
        assert (code, payload["parse_failures"]) == (0, 1)
        assert payload["metrics"]["accuracy"]["value"] == pytest.approx(1 / 3)
        assert payload["metrics"]["macro_f1"]["value"] == pytest.approx(0.5)  # labels (A), (B): F1 1 and 0
