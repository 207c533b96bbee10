#!/usr/bin/env bash
# Runs max_c's benchmarks (DESIGN §10): builds the library and max_c_bench in build-bench/
# (the project's default RelWithDebInfo flags, so the figures are what users get), installs
# ONNX Runtime and onnx into the repo's .venv, then prints
#   1. max_c_bench: matmul GFLOP/s against the float32 peak, the fused dense layer, and the
#      execute overhead of a one-op graph;
#   2. bench/mlp_vs_onnxruntime.py: a 3-layer MLP, max_c / ONNX Runtime latency ratios;
#   3. bench/minilm_load.py: the real MiniLM-L6 weights' load (map) time beside a numpy read
#      of the file, compile + bind time, and one execute.
# Benchmarks are not tests: they print figures and fail only when something cannot run.
#
#   bench/run.sh [THREADS]      (default 2, the dev/CI machine's cores)
#   MAX_C_BENCH_BUILD=DIR       another build folder (configured here without the tests)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

threads=${1:-2}
build=${MAX_C_BENCH_BUILD:-$MAX_C_ROOT/build-bench}
venv=$MAX_C_ROOT/.venv

"$MAX_C_ROOT/scripts/setup.sh"
log "building max_c and max_c_bench in ${build#"$MAX_C_ROOT"/}"
"$MAX_C_ROOT/scripts/build.sh" "$build" -DMAX_C_BUILD_TESTS=OFF --target max_c --target max_c_bench
if ! "$venv/bin/python" -c 'import onnx, onnxruntime' >/dev/null 2>&1; then
  log "pip install onnx onnxruntime into .venv"
  "$venv/bin/python" -m pip install --quiet onnx onnxruntime
fi

log "max_c_bench ($threads threads)"
"$build/bench/max_c_bench" "$threads"
echo
log "MLP: max_c vs ONNX Runtime ($threads threads)"
PYTHONPATH=$MAX_C_ROOT/bindings/python MAX_C_LIBRARY=$build/libmax_c.so \
  "$venv/bin/python" "$MAX_C_ROOT/bench/mlp_vs_onnxruntime.py" --threads "$threads"
echo
log "MiniLM-L6 weights: load, compile, execute ($threads threads)"
PYTHONPATH=$MAX_C_ROOT/bindings/python MAX_C_LIBRARY=$build/libmax_c.so \
  "$venv/bin/python" "$MAX_C_ROOT/bench/minilm_load.py" --threads "$threads"
