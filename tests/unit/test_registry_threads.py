"""`Registry.get` under concurrent first use: the served RAL's worker threads render their first prompts
at once, and each asks `TASKS` for the task. Before, every thread but the first hit ``del self._lazy[name]``
after the first had deleted it: a ``KeyError`` and a 500 for those requests (found by
bench/serve_drain.py; the 500 of tests/integration/test_cli_serve_sigterm.py)."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from biorab.common.registry import Registry


def test_concurrent_first_gets_of_a_lazy_entry_all_succeed(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # a module slow to import: every thread reaches the lazy entry before the first has loaded it
    (tmp_path / "slow_component.py").write_text("import time\ntime.sleep(0.3)\nclass Thing:\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "slow_component", raising=False)
    registry: Registry[type] = Registry("thing")
    registry.add_lazy("thing", "slow_component:Thing")
    start = threading.Barrier(8)
    got: list[object] = []
    errors: list[BaseException] = []

    def first_use() -> None:
        start.wait()
        try:
            got.append(registry.get("thing"))
        except BaseException as e:  # noqa: BLE001 - the failure under test is any exception
            errors.append(e)

    threads = [threading.Thread(target=first_use) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == [] and len(got) == 8
    assert len({id(obj) for obj in got}) == 1  # one class object for every caller
    assert registry.names() == ["thing"] and registry.get("thing") is got[0]
