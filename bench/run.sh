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
#   bench/run.sh real [OPTIONS]     the real-model corpus alone (bench/real_corpus.py: the
#                                   shipped .onnx files that setup fetches, and the onnx
#                                   package's light zoo), max_c vs ONNX Runtime at batch 1,
#                                   1 and 2 threads, into build-bench/real/real_models.json;
#                                   OPTIONS go to bench/real_bench.py, e.g. --models
#                                   ppocr_v4_det,light_resnet50 --threads 2 --budget 5
#   bench/run.sh contention [OPTIONS]
#                                   max_c beside ONNX Runtime on a shared machine (bench/
#                                   contention_bench.py): the MLP, MiniLM-L6 seq 128, ResNet-50
#                                   and two real CNNs at 2 threads, quiet, beside two busy-loop
#                                   processes, and with 1, 2, 4 and 8 client threads calling
#                                   one model; into build-bench/contention/contention.json;
#                                   OPTIONS go to the script, e.g. --models mlp --clients 1,4
#   bench/run.sh overhead [OPTIONS] the per-call overhead of max_model_execute alone (bench/
#                                   overhead.cc: tiny models on one thread, ns and heap
#                                   allocations per call), into build-bench/overhead/
#                                   overhead.json; OPTIONS go to max_c_overhead, e.g.
#                                   --calls 20000 --rounds 9
#   bench/run.sh gpu-pack           builds here, then puts what the GPU run needs into
#                                   build-gpu-bench/ (git-ignored, about 48 MB): the library,
#                                   stripped, and the libraries it links that a GPU machine
#                                   may lack (oneDNN, OpenCL's loader, GNU OpenMP)
#   MAX_C_BENCH_BUILD=DIR           another build folder (configured here without the tests)
#   MAX_C_LIBRARY=PATH              a libmax_c built already: nothing is set up or built
#   MAX_C_BENCH_PYTHON=PYTHON       the interpreter, used as it is (default: .venv's, which
#                                   setup installs into; python3 where there is no .venv)
#
# The GPU benchmark (MiniLM-L6 and BERT-base against PyTorch on the same GPU, float32; the
# ratio max_c / PyTorch is printed at the end, for the GPU issue's note):
#   bench/run.sh onnx --device gpu --cases minilm-s128,bert-s128 --batches 1,8 --threads 2
# On a GPU machine that has no network and no oneDNN (this workplace's device machine: its
# python3 holds torch, onnx, onnxruntime and numpy), run `bench/run.sh gpu-pack` here first,
# then carry build-gpu-bench/ there: with --device gpu, run.sh uses build-gpu-bench/ when it
# holds a library and MAX_C_LIBRARY is unset, and sets nothing up. Without a GPU,
# --device gpu stops with "no accelerator: ..." and status 2. ONNX Runtime is timed on the
# GPU only with onnxruntime-gpu's CUDA provider; else its CPU run gives the reference outputs.
# max_c's CUDA libraries are found by name (libcuda.so.1, libnvrtc.so.12/13,
# libcublasLt.so.12/13) or set with MAX_C_CUDA_LIBRARY, MAX_C_NVRTC_LIBRARY and
# MAX_C_CUBLASLT_LIBRARY.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib.sh"

only_onnx=false
only_real=false
only_contention=false
gpu=false
if [[ ${1:-} == overhead ]]; then
  # The library and one small program: no Python, no ONNX Runtime.
  shift
  build=${MAX_C_BENCH_BUILD:-$MAX_C_ROOT/build-bench}
  log "building max_c and max_c_overhead in ${build#"$MAX_C_ROOT"/}"
  "$MAX_C_ROOT/scripts/build.sh" "$build" -DMAX_C_BUILD_TESTS=OFF --target max_c --target max_c_overhead
  mkdir -p "$build/overhead"
  "$build/bench/max_c_overhead" --json "$build/overhead/overhead.json" "$@"
  log "wrote ${build#"$MAX_C_ROOT"/}/overhead/overhead.json"
  exit
fi
if [[ ${1:-} == gpu-pack ]]; then
  gpu_pack=true
  onnx_args=()
elif [[ ${1:-} == real ]]; then
  gpu_pack=false
  only_real=true
  shift
  real_args=("$@")
elif [[ ${1:-} == contention ]]; then
  gpu_pack=false
  only_contention=true
  shift
  contention_args=("$@")
elif [[ ${1:-} == onnx ]]; then
  gpu_pack=false
  only_onnx=true
  shift
  onnx_args=("$@")
  prev=
  for arg in "$@"; do
    [[ $arg == --device=gpu || ($prev == --device && $arg == gpu) ]] && gpu=true
    prev=$arg
  done
else
  gpu_pack=false
  threads=${1:-2}
  onnx_args=(--threads "$( ((threads == 1)) && echo 1 || echo "1,$threads")")
fi
build=${MAX_C_BENCH_BUILD:-$MAX_C_ROOT/build-bench}
pack=$MAX_C_ROOT/build-gpu-bench
venv=$MAX_C_ROOT/.venv

# The GPU run: refuse at once where no NVIDIA GPU shows (before building anything); take the
# library gpu-pack left when none is named.
if $gpu; then
  if ! { compgen -G '/dev/nvidia[0-9]*' >/dev/null || nvidia-smi -L >/dev/null 2>&1; }; then
    echo "onnx_bench: no accelerator: no NVIDIA GPU on this machine (no /dev/nvidia0, no" \
      "nvidia-smi); --device gpu runs on a machine with a GPU" >&2
    exit 2
  fi
  if [[ -z ${MAX_C_LIBRARY:-} && -e $pack/libmax_c.so.1 ]]; then
    export MAX_C_LIBRARY=$pack/libmax_c.so.1
    export LD_LIBRARY_PATH=$pack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  fi
fi

if [[ -n ${MAX_C_LIBRARY:-} ]]; then
  # A library built already (a machine without the network or the build's packages).
  library=$MAX_C_LIBRARY
  [[ -e $library ]] || die "MAX_C_LIBRARY is $library, which does not exist"
  python=${MAX_C_BENCH_PYTHON:-$([[ -x $venv/bin/python ]] && echo "$venv/bin/python" || echo python3)}
  if ! "$python" -c 'import numpy, onnx, onnxruntime' >/dev/null 2>&1; then
    die "$python lacks numpy, onnx or onnxruntime (nothing is installed with MAX_C_LIBRARY set)"
  fi
  $only_onnx || $only_real || $only_contention || $gpu_pack ||
    die "with MAX_C_LIBRARY set, run.sh runs the ONNX suites only: bench/run.sh onnx|real|contention ..."
else
  "$MAX_C_ROOT/scripts/setup.sh"
  log "building max_c and max_c_bench in ${build#"$MAX_C_ROOT"/}"
  "$MAX_C_ROOT/scripts/build.sh" "$build" -DMAX_C_BUILD_TESTS=OFF --target max_c --target max_c_bench
  library=$build/libmax_c.so
  python=${MAX_C_BENCH_PYTHON:-$venv/bin/python}
  if [[ -z ${MAX_C_BENCH_PYTHON:-} ]] && ! "$python" -c 'import onnx, onnxruntime, matplotlib' >/dev/null 2>&1; then
    # Pinned and hash-checked like the test packages (scripts/requirements/bench.in).
    log "pip install -r scripts/requirements/bench.txt into .venv"
    "$python" -m pip install --quiet --require-hashes --only-binary :all: \
      -r "$MAX_C_ROOT/scripts/requirements/bench.txt"
  fi
fi

if $gpu_pack; then
  rm -rf "$pack"
  mkdir -p "$pack"
  strip --strip-debug -o "$pack/libmax_c.so.1" "$(realpath "$library")"
  for lib in libdnnl.so.2 libOpenCL.so.1 libgomp.so.1; do
    path=$(ldd "$library" | awk -v l="$lib" '$1 == l { print $3 }')
    [[ -n $path ]] && cp -L "$path" "$pack/$lib"
  done
  log "$(du -sh "$pack" | cut -f1) in ${pack#"$MAX_C_ROOT"/}: carry it to the GPU machine and run there"
  log "  bench/run.sh onnx --device gpu --cases minilm-s128,bert-s128 --batches 1,8 --threads 2"
  exit 0
fi

run_python() {
  PYTHONPATH=$MAX_C_ROOT/bindings/python MAX_C_LIBRARY=$library "$python" "$@"
}

if $only_contention; then
  log "contention: max_c vs ONNX Runtime, quiet, noisy and with concurrent clients"
  run_python "$MAX_C_ROOT/bench/contention_bench.py" --out "$build/contention" \
    --cache "$build/onnx-models" "${contention_args[@]}"
  exit
fi
if $only_real; then
  log "real models: max_c vs ONNX Runtime"
  run_python "$MAX_C_ROOT/bench/real_bench.py" --out "$build/real" "${real_args[@]}"
  exit
fi
# matplotlib draws the chart; a python without it (a GPU machine's may lack it) skips it.
run_python -c 'import matplotlib' >/dev/null 2>&1 || onnx_args+=(--no-chart)

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
if $gpu; then
  log "ONNX models on the GPU: max_c vs PyTorch (ONNX Runtime's outputs for reference)"
else
  log "ONNX models: max_c vs ONNX Runtime (and PyTorch where installed)"
fi
run_python "$MAX_C_ROOT/bench/onnx_bench.py" --out "$build/onnx-bench" \
  --cache "$build/onnx-models" "${onnx_args[@]}"
