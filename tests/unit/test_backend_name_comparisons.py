"""No backend's name is compared outside biorab/generation/ (issue 42 item 3): a decision about a backend
asks its capabilities or params (`tests/support/backend_name_rules.py`)."""

from __future__ import annotations

from tests.support.backend_name_rules import OWNER, REPO, backend_names, check_tree, comparisons, python_files

NAMES = {"fake", "openai", "transformers", "vllm"}


def test_no_backend_name_is_compared_outside_generation() -> None:
    assert [str(c) for c in check_tree()] == []


def test_the_registered_backends_are_the_names_checked() -> None:
    # a rule that knew no names would pass: the four built-in backends are registered
    assert backend_names() >= NAMES


def test_the_walk_covers_the_layers_and_skips_the_owner() -> None:
    files = {p.relative_to(REPO).as_posix() for p in python_files()}
    assert {"biorab/runner/checks/validate.py", "pipelines/vllm_processor.py", "serve/generator.py",
            "biorab/sweep/reasoning_axes.py"} <= files
    assert not any(f.startswith(OWNER) for f in files)
    assert len(files) > 100


def test_planted_comparisons_are_found() -> None:
    source = ('if config.backend.name == "openai":\n    pass\n'  # line 1
              'x = backend != "vllm"\n'  # line 3
              'y = backend in ("transformers", "other")\n'  # line 4
              'z = "fake" not in names\n'  # line 5
              'w = backend is "vllm"\n'  # an identity test is not an equality: not this rule's
              'v = name == "bm25"\n'  # not a backend
              'u = {"name": "fake"}\n'  # a value, not a comparison
              't = "vllm" < backend\n')  # ordering: not a name test
    found = [(c.line, c.name) for c in comparisons(source, NAMES)]
    assert found == [(1, "openai"), (3, "vllm"), (4, "transformers"), (5, "fake")]
