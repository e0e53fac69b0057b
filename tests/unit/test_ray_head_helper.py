"""`tests.support.ray_head.LocalRayHead` without Ray: its ports can never make ``ray start`` refuse to
start (distinct, and outside the worker-port range), and a failed start shows what the command said, is
retried once on fresh ports, and raises with both outputs when it fails again (issue 36)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support.ray_head import PORT_OPTIONS, LocalRayHead, ephemeral_low, free_ports

ENV = {"PATH": "/usr/bin:/bin"}


def fake_ray(tmp_path: Path, fail_times: int) -> Path:
    """A ``ray`` that records its arguments and exits 1 with a message its first `fail_times` calls."""
    script = tmp_path / "ray"
    script.write_text(f"""#!/bin/sh
n=$(cat {tmp_path}/calls 2>/dev/null || echo 0); n=$((n + 1)); echo $n > {tmp_path}/calls
echo "$@" >> {tmp_path}/args
if [ $n -le {fail_times} ]; then echo "ValueError: port taken (call $n)" >&2; exit 1; fi
""", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_ports_are_distinct_and_outside_the_worker_range() -> None:
    assert len(set(free_ports(50))) == 50
    head = LocalRayHead("ray", {})
    try:
        assert len(set(head.ports.values())) == len(PORT_OPTIONS)
        assert head.worker_ports[-1] < ephemeral_low() <= min(head.ports.values())
    finally:
        head._stop()


def test_a_failed_start_is_retried_once_on_fresh_ports_with_rays_output(tmp_path: Path) -> None:
    head = LocalRayHead(str(fake_ray(tmp_path, fail_times=1)), ENV)
    said = r"failed once; retried on fresh ports(.|\n)*port taken \(call 1\)"
    with pytest.warns(UserWarning, match=said), head:
        pass
    first, second = (tmp_path / "args").read_text().splitlines()
    assert first != second and f"--temp-dir={head.temp_dir}" in second
    assert not Path(head.temp_dir).exists()  # both temp dirs removed


def test_a_second_failure_raises_with_both_outputs(tmp_path: Path) -> None:
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match=r"failed twice(.|\n)*exited 1(.|\n)*"
                                                                      r"call 1(.|\n)*call 2"):
        LocalRayHead(str(fake_ray(tmp_path, fail_times=2)), ENV).__enter__()
