#!/usr/bin/env bash
# Installs what building and testing max_c needs on a fresh Debian 12 machine, and nothing
# that is already there: the system packages (apt, only those missing) and a Python virtual
# environment at .venv for the Python-side suites. Idempotent, non-interactive, quiet when
# there is nothing to do. Runs as root, or through sudo when it is available.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# System packages: compilers and build tools, the test frameworks (GoogleTest, cmocka), the
# ABI checker (abidw/abidiff), the libraries the engine links (oneDNN, FlatBuffers), venv,
# a JDK with Maven for the Java binding's suite, and HIP's runtime compiler (hipRTC, inside
# Debian's ROCm 5.2 libamdhip64, with its builtins and device libraries): it runs without a
# GPU, and with it tests/hiprtc compiles every kernel source for AMD GPUs.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libgtest-dev libcmocka-dev abigail-tools
  libdnnl-dev flatbuffers-compiler libflatbuffers-dev
  python3 python3-venv
  openjdk-17-jdk-headless maven
  libamdhip64-5 libhiprtc-builtins5 rocm-device-libs
)
# Python packages of .venv: numpy (op conformance, DLPack), pytest (the Python suites), wheel
# (so the install test builds the binding's wheel offline), onnx (the ONNX backend node
# cases the conformance suite runs through our importer), onnxruntime (the bench models'
# test compares max_c with it on small versions of every bench model), pytest-xdist (the
# emulated GPU's op suite compiles its kernels on every core). PIP_MODULES: what each imports as.
PIP_PACKAGES=(numpy pytest wheel onnx onnxruntime pytest-xdist)
PIP_MODULES=(numpy pytest wheel onnx onnxruntime xdist)
VENV="$MAX_C_ROOT/.venv"
# NVRTC, CUDA's runtime compiler, from NVIDIA's wheel: it runs without a GPU, and with it the
# GPU tests (tests/gpu) compile every CUDA kernel source, so a kernel that does not compile
# fails CI on machines without a GPU. Optional: where the wheel cannot be installed (no
# network, another platform) setup goes on and those tests skip, saying why.
NVRTC_PIP_PACKAGE=nvidia-cuda-nvrtc-cu12

is_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

install_system_packages() {
  command -v dpkg-query >/dev/null 2>&1 || die "not a Debian system: install ${APT_PACKAGES[*]} by hand"
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do is_installed "$p" || missing+=("$p"); done
  ((${#missing[@]} == 0)) && return 0
  log "apt-get install ${missing[*]}"
  local out
  out=$(mktemp)
  if ! { as_root apt-get -o DPkg::Lock::Timeout=300 update -qq &&
         as_root apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
           "${missing[@]}"; } >"$out" 2>&1; then
    tail -n 40 "$out" >&2
    rm -f "$out"
    die "apt-get failed"
  fi
  rm -f "$out"
}

python_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; }

create_venv() {
  python_ok && return 0
  rm -rf "$VENV"
  log "creating the Python virtual environment .venv"
  # The python3 on PATH first (it may be newer than Debian's); Debian's when that one has no venv.
  local py
  for py in python3 /usr/bin/python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -m venv "$VENV" >/dev/null 2>&1 && python_ok; then
      return 0
    fi
    rm -rf "$VENV"
  done
  die "could not create $VENV (python3 -m venv failed)"
}

install_python_packages() {
  local modules
  modules=$(IFS=,; echo "${PIP_MODULES[*]}")
  "$VENV/bin/python" -c "import $modules" >/dev/null 2>&1 && return 0
  log "pip install ${PIP_PACKAGES[*]} into .venv"
  local out
  out=$(mktemp)
  if ! "$VENV/bin/python" -m pip install --quiet "${PIP_PACKAGES[@]}" >"$out" 2>&1; then
    tail -n 40 "$out" >&2
    rm -f "$out"
    die "pip install failed"
  fi
  rm -f "$out"
}

# The wheel's libnvrtc.so.12 (scripts/test.sh looks for the same path), or nothing.
nvrtc_library() { compgen -G "$VENV/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" | head -n 1 || true; }

install_nvrtc() {
  [[ -n $(nvrtc_library) ]] && return 0
  log "pip install $NVRTC_PIP_PACKAGE into .venv (NVRTC, for the CUDA kernel compile checks)"
  local out
  out=$(mktemp)
  if ! "$VENV/bin/python" -m pip install --quiet "$NVRTC_PIP_PACKAGE" >"$out" 2>&1; then
    tail -n 5 "$out" >&2
    log "warning: $NVRTC_PIP_PACKAGE could not be installed; the CUDA kernel compile checks will skip"
  fi
  rm -f "$out"
}

install_system_packages
require_commands cmake ninja cc c++ pkg-config
create_venv
install_python_packages
install_nvrtc
