"""Which weights dtype ``dtype: auto`` means on this machine.

bf16 halves memory and is fastest where the hardware multiplies bf16 natively (CUDA GPUs; x86 CPUs with
avx512_bf16 or AMX). Elsewhere torch emulates bf16 matmuls and a batch of 8 ran at 29 tok/s against
75 tok/s in float32 on an AVX2-only EPYC (docs/generation.md), so float32 is the CPU fallback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

#: cpuinfo flags that mean the CPU has bf16 matmul instructions (x86: AVX512-BF16, AMX; Arm: BF16).
NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})

_announced: set[tuple[str, str, str]] = set()


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The CPU feature flags of the first processor in `cpuinfo` (empty where the file is absent)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in {"flags", "Features"}:  # x86 / Arm spelling
            return frozenset(value.split())
    return frozenset()


#: The flags that decide the CPU's matmul speed (printed with every timing: `cpu_summary`).
SIMD_FLAGS = ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_tile", "bf16")


def cpu_summary(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """One line for a timing report: model name, logical CPUs, the SIMD flags present and absent.

    >>> cpu_summary(Path("/nonexistent")).split(";")[1]
    ' flags: -'
    """
    model = "unknown CPU"
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
                break
    except OSError:
        pass
    flags = cpu_flags(cpuinfo)
    present = [f for f in SIMD_FLAGS if f in flags]
    absent = [f for f in SIMD_FLAGS if f not in flags]
    return (f"{model}, {os.cpu_count()} logical CPUs; flags: {' '.join(present) or '-'}; "
            f"absent: {' '.join(absent) or '-'}")


def machine_summary(dtype: str) -> str:
    """Lines for a timing report: `cpu_summary`, the SIMD level torch's kernels run at (lower than the
    CPU's under ``ATEN_CPU_CAPABILITY=avx2``, which with ``MKL_ENABLE_INSTRUCTIONS=AVX2`` and
    ``ONEDNN_MAX_CPU_ISA=AVX2`` runs an AVX-512 machine on the code paths of an AVX2-only CPU), what
    `dtype` resolves to here (CPU), and the load average (a shared machine's timings need it)."""
    import torch

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    names = ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS", "ONEDNN_MAX_CPU_ISA")
    forced = {k: os.environ[k] for k in names if k in os.environ}
    return (f"cpu: {cpu_summary()}\ntorch kernels: {torch.backends.cpu.get_cpu_capability()}"
            f"{' (forced: ' + ', '.join(f'{k}={v}' for k, v in forced.items()) + ')' if forced else ''}\n"
            f"dtype: {dtype} -> {resolve_dtype(dtype, 'cpu')}; load average: {load}")


#: oneDNN's ISA caps (``ONEDNN_MAX_CPU_ISA``, or its old name ``DNNL_MAX_CPU_ISA``) that keep bf16 matmuls
#: native: AVX512_CORE_BF16 and everything above it (AMX, FP16, AVX10, ALL).
_ONEDNN_BF16_ISA_MARKS = ("BF16", "AMX", "FP16", "AVX10", "ALL")


def kernel_cap_below_bf16(env: Mapping[str, str] | None = None) -> str | None:
    """The variable (``NAME=value``) that caps torch's kernels below native bf16, or None.

    ``ATEN_CPU_CAPABILITY=avx2`` with ``ONEDNN_MAX_CPU_ISA=AVX2`` runs an AVX-512 machine on an AVX2-only
    CPU's code paths (docs/pipeline.md); bf16 is then emulated there too, although /proc/cpuinfo still
    lists avx512_bf16, so ``dtype: auto`` must follow the cap, not the flags.
    """
    found = os.environ if env is None else env
    aten = found.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if aten in {"default", "avx2"}:  # ATen's only level with bf16 instructions is avx512
        return f"ATEN_CPU_CAPABILITY={aten}"
    for name in ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"):
        isa = found.get(name, "").strip().upper()
        if isa and not any(mark in isa for mark in _ONEDNN_BF16_ISA_MARKS):
            return f"{name}={isa}"
    return None


def cpu_has_native_bf16(flags: frozenset[str] | None = None) -> bool:
    """True when the CPU multiplies bf16 natively (cpuinfo flags, else torch's capability string)."""
    found = cpu_flags() if flags is None else flags
    if found:
        return bool(found & NATIVE_BF16_FLAGS)
    import torch

    capability = str(torch.backends.cpu.get_cpu_capability()).upper()
    return "BF16" in capability or "AMX" in capability


def resolve_dtype(
    dtype: str, device: str, *, flags: frozenset[str] | None = None, env: Mapping[str, str] | None = None
) -> str:
    """`dtype` itself unless it is ``auto``: then bf16 on CUDA (fp16 without bf16 support) and on CPUs
    with native bf16 whose kernels are not capped below it (`kernel_cap_below_bf16` of `env`, default the
    process environment), float32 on other CPUs. The choice is printed once per process to stderr."""
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        import torch

        chosen, why = ("bfloat16", "CUDA") if torch.cuda.is_bf16_supported() else ("float16", "CUDA, no bf16")
    elif not cpu_has_native_bf16(flags):
        chosen, why = "float32", "CPU without native bf16 (avx512_bf16/AMX): bf16 would be emulated"
    elif cap := kernel_cap_below_bf16(env):
        chosen, why = "float32", f"native bf16, but kernels capped by {cap}: bf16 would be emulated"
    else:
        chosen, why = "bfloat16", "CPU with native bf16"
    if (dtype, device, chosen) not in _announced:
        _announced.add((dtype, device, chosen))
        print(f"biorab: dtype auto -> {chosen} on {device} ({why})", file=sys.stderr)
    return chosen
