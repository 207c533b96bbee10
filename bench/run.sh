#!/usr/bin/env bash
# Runs max_c's benchmarks (DESIGN §10): builds the library and max_c_bench in build-bench/
# (the project's default RelWithDebInfo flags, so the figures are what users get), installs
# ONNX Runtime, onnx and matplotlib into the repo's .venv, then prints
#   1. max_c_bench: matmul GFLOP/s against the float32 peak, the fused dense layer, and the
#      execute overhead of a one-op graph;
#   2. bench/mlp_vs_onnxruntime.py: a 3-layer MLP, max_c / ONNX Runtime latency ratios;
#   3. bench/minilm_load.py: the real MiniLM-L6 weights' load (map) time beside a numpy read
#      of the file, compile + bind time, and one execute;
#   4. bench/onnx_bench.py: the ONNX suite, max_c against ONNX Runtime (and PyTorch CPU where
#      installed) on the same generated .onnx files: the MLP, MiniLM-L6 (seq 32, 128),
#      BERT-base (seq 128), a GPT-2-small decoder stack (prefill 128) and ResNet-50, batch 1
#      and 8, 1 and THREADS threads; median/p10/p90 latency, load + compile, peak memory,
#      output differences and ratios, written to build-bench/onnx-bench/onnx_bench.{json,png}.
#      The models are generated once into build-bench/onnx-models/ (about 1.8 GB).
# Benchmarks are not tests: they print figures and fail only when something cannot run.
#
#   bench/run.sh [THREADS]          everything (THREADS default 2, the dev/CI machine's cores)
#   bench/run.sh onnx [OPTIONS]     the ONNX suite alone; OPTIONS go to bench/onnx_bench.py,
#                                   e.g. --cases minilm-s128 --batches 1 --threads 2
#   MAX_C_BENCH_BUILD=DIR           another build folder (configured here without the tests)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

only_onnx=false
if [[ ${1:-} == onnx ]]; then
  only_onnx=true
  shift
  onnx_args=("$@")
else
  threads=${1:-2}
  onnx_args=(--threads "$( ((threads == 1)) && echo 1 || echo "1,$threads")")
fi
build=${MAX_C_BENCH_BUILD:-$MAX_C_ROOT/build-bench}
venv=$MAX_C_ROOT/.venv

"$MAX_C_ROOT/scripts/setup.sh"
log "building max_c and max_c_bench in ${build#"$MAX_C_ROOT"/}"
"$MAX_C_ROOT/scripts/build.sh" "$build" -DMAX_C_BUILD_TESTS=OFF --target max_c --target max_c_bench
if ! "$venv/bin/python" -c 'import onnx, onnxruntime, matplotlib' >/dev/null 2>&1; then
  log "pip install onnx onnxruntime matplotlib into .venv"
  "$venv/bin/python" -m pip install --quiet onnx onnxruntime matplotlib
fi
run_python() {
  PYTHONPATH=$MAX_C_ROOT/bindings/python MAX_C_LIBRARY=$build/libmax_c.so "$venv/bin/python" "$@"
}

if ! $only_onnx; then
  log "max_c_bench ($threads threads)"
  "$build/bench/max_c_bench" "$threads"
  echo
  log "MLP: max_c vs ONNX Runtime ($threads threads)"
  run_python "$MAX_C_ROOT/bench/mlp_vs_onnxruntime.py" --threads "$threads"
  echo
  log "MiniLM-L6 weights: load, compile, execute ($threads threads)"
  run_python "$MAX_C_ROOT/bench/minilm_load.py" --threads "$threads"
  echo
fi
log "ONNX models: max_c vs ONNX Runtime (and PyTorch where installed)"
run_python "$MAX_C_ROOT/bench/onnx_bench.py" --out "$build/onnx-bench" \
  --cache "$build/onnx-models" "${onnx_args[@]}"
