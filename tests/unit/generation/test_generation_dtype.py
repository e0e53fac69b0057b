"""`dtype: auto` for the transformers backend: bf16 only where the hardware multiplies it natively."""

from __future__ import annotations

from pathlib import Path

import pytest

from biorab.generation import dtype as hf_dtype
from biorab.generation.dtype import cpu_flags, cpu_has_native_bf16, resolve_dtype


def test_cpuinfo_flags_are_read(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f\n\nprocessor\t: 1\nflags\t\t: other\n")
    assert cpu_flags(info) == frozenset({"fpu", "avx2", "avx512f"})
    assert cpu_flags(tmp_path / "missing") == frozenset()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        ({"avx2", "fma"}, "float32"),  # AVX2-only EPYC: bf16 would be emulated
        ({"avx2", "avx512f", "avx512_bf16"}, "bfloat16"),  # Zen 4 / Cooper Lake
        ({"avx2", "amx_bf16", "amx_tile"}, "bfloat16"),  # Sapphire Rapids
        ({"fp", "asimd", "bf16"}, "bfloat16"),  # Arm with BF16
    ],
)
def test_auto_dtype_follows_native_bf16(
    flags: set[str], expected: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hf_dtype, "_announced", set())
    assert cpu_has_native_bf16(frozenset(flags)) is (expected == "bfloat16")
    assert resolve_dtype("auto", "cpu", flags=frozenset(flags), env={}) == expected
    assert resolve_dtype("auto", "cpu", flags=frozenset(flags), env={}) == expected
    assert capsys.readouterr().err.count(f"biorab: dtype auto -> {expected} on cpu") == 1  # printed once


SAPPHIRE_RAPIDS = frozenset({"avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"})


@pytest.mark.parametrize(
    ("env", "cap"),
    [
        ({}, None),
        ({"ATEN_CPU_CAPABILITY": "avx512", "ONEDNN_MAX_CPU_ISA": "AVX512_CORE_AMX"}, None),
        ({"ONEDNN_MAX_CPU_ISA": "avx512_core_bf16"}, None),
        ({"DNNL_MAX_CPU_ISA": "ALL"}, None),
        ({"MKL_ENABLE_INSTRUCTIONS": "AVX2"}, None),  # MKL runs the float32 GEMMs only
        ({"ATEN_CPU_CAPABILITY": "avx2"}, "ATEN_CPU_CAPABILITY=avx2"),
        ({"ATEN_CPU_CAPABILITY": "default"}, "ATEN_CPU_CAPABILITY=default"),
        ({"ONEDNN_MAX_CPU_ISA": "avx2"}, "ONEDNN_MAX_CPU_ISA=AVX2"),
        ({"DNNL_MAX_CPU_ISA": "AVX512_CORE_VNNI"}, "DNNL_MAX_CPU_ISA=AVX512_CORE_VNNI"),
    ],
)
def test_auto_dtype_follows_a_forced_kernel_level(
    env: dict[str, str], cap: str | None, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An AVX-512 machine run on AVX2 code paths (docs/pipeline.md) emulates bf16 like an AVX2-only CPU,
    although its cpuinfo flags still list avx512_bf16."""
    monkeypatch.setattr(hf_dtype, "_announced", set())
    assert hf_dtype.kernel_cap_below_bf16(env) == cap
    expected = "bfloat16" if cap is None else "float32"
    assert resolve_dtype("auto", "cpu", flags=SAPPHIRE_RAPIDS, env=env) == expected
    err = capsys.readouterr().err
    assert err.count(f"biorab: dtype auto -> {expected} on cpu") == 1
    assert cap is None or f"kernels capped by {cap}" in err


def test_explicit_dtype_is_kept() -> None:
    assert resolve_dtype("bfloat16", "cpu", flags=frozenset({"avx2"})) == "bfloat16"
    assert resolve_dtype("float32", "cuda") == "float32"


def test_cpu_summary_names_model_and_present_and_absent_flags(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu avx2 fma sse4_2\n")
    summary = hf_dtype.cpu_summary(info)
    assert summary.startswith("AMD EPYC 7B13, ")
    flags, absent = summary.split("; ")[1:]
    assert flags == "flags: avx2 fma"
    assert absent == "absent: avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile bf16"
    assert "flags: -" in hf_dtype.cpu_summary(tmp_path / "missing")
