#!/usr/bin/env bash
# The GPU issue's checks on real hardware, in one run, for a machine with an NVIDIA GPU and no
# network whose python3 holds numpy, ml_dtypes, pytest, torch, cupy, onnx and onnxruntime
# (this workplace's device machine). Here, first: `bench/run.sh gpu-pack`; then carry
# build-gpu-bench/ there and run this from the repository root:
#
#   scripts/gpu_check.sh [STEP ...]     STEP: info dlpack ops bench (default: all, in order)
#
# Each step's log goes to $OUT (the device tool's folder) or build-gpu-check/, and the last
# lines print one verdict per step. Steps have time limits (seconds) that keep the whole run
# inside one 10-minute command (info 30, dlpack 60, GPU_CHECK_OPS_S 280, GPU_CHECK_BENCH_S
# 200); with a warm machine, `info dlpack ops` and then `bench` as two calls leave more room.
#   info    nvidia-smi, and the GPU as libmax_c sees it (name, architecture, memory)
#   dlpack  DLPack with torch and CuPy on device memory, capture/replay as CUDA graphs
#           (tests/test_dlpack_gpu.py, tests/test_gpu_capture.py), with MAX_C_REQUIRE_GPU=1
#   ops     the op conformance suite on gpu:0 against numpy (MAX_C_TEST_DEVICE=gpu)
#   bench   MiniLM-L6 and BERT-base, max_c against PyTorch on the same GPU (bench/run.sh)
# NVRTC and cuBLASLt are looked for where CUDA's toolkit and the NVIDIA wheels put them, unless
# MAX_C_NVRTC_LIBRARY / MAX_C_CUBLASLT_LIBRARY name them.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
pack=$root/build-gpu-bench
out=${OUT:-$root/build-gpu-check}
mkdir -p "$out"
steps=("$@")
((${#steps[@]})) || steps=(info dlpack ops bench)
export python=${MAX_C_BENCH_PYTHON:-python3}

[[ -e $pack/libmax_c.so.1 ]] || { echo "gpu_check: no $pack/libmax_c.so.1: run bench/run.sh gpu-pack first" >&2; exit 2; }
export MAX_C_LIBRARY=$pack/libmax_c.so.1
export LD_LIBRARY_PATH=$pack${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$root/bindings/python PYTHONUNBUFFERED=1
export MAX_C_KERNEL_CACHE_DIR=${MAX_C_KERNEL_CACHE_DIR:-/tmp/max_c-kernel-cache}

# The first file matching any pattern, or nothing.
first_match() {
  local p f
  for p in "$@"; do
    for f in $p; do [[ -e $f ]] && { echo "$f"; return; }; done
  done
}
site=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)
export MAX_C_NVRTC_LIBRARY=${MAX_C_NVRTC_LIBRARY:-$(first_match \
  "$site/nvidia/cu13/lib/libnvrtc.so.13" "$site/nvidia/cuda_nvrtc/lib/libnvrtc.so.1[23]" \
  "/usr/local/cuda/lib64/libnvrtc.so.1[23]" "/usr/local/cuda*/targets/x86_64-linux/lib/libnvrtc.so.1[23]")}
export MAX_C_CUBLASLT_LIBRARY=${MAX_C_CUBLASLT_LIBRARY:-$(first_match \
  "$site/nvidia/cu13/lib/libcublasLt.so.13" "$site/nvidia/cublas/lib/libcublasLt.so.1[23]" \
  "/usr/local/cuda/lib64/libcublasLt.so.1[23]" "/usr/local/cuda*/targets/x86_64-linux/lib/libcublasLt.so.1[23]")}
[[ -n $MAX_C_NVRTC_LIBRARY ]] || unset MAX_C_NVRTC_LIBRARY
[[ -n $MAX_C_CUBLASLT_LIBRARY ]] || unset MAX_C_CUBLASLT_LIBRARY

declare -A verdict
run_step() {  # name, seconds, command...
  local name=$1 seconds=$2 start=$SECONDS rc
  shift 2
  echo "== $name (limit ${seconds}s): $*"
  timeout --kill-after=10 "$seconds" "$@" 2>&1 | tee "$out/$name.log"
  rc=${PIPESTATUS[0]}
  verdict[$name]="$([[ $rc == 0 ]] && echo ok || echo "FAILED (status $rc)") in $((SECONDS - start))s"
}

info() {
  nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  echo "NVRTC: ${MAX_C_NVRTC_LIBRARY:-searched by soname}; cuBLASLt: ${MAX_C_CUBLASLT_LIBRARY:-searched by soname}"
  MAX_C_LOG_LEVEL=info "$python" - <<'EOF'
from max_c.driver import Accelerator, accelerator_count
n = accelerator_count()
print("accelerator_count", n)
assert n > 0, "libmax_c sees no accelerator"
gpu = Accelerator()
print("gpu:0", gpu.label, gpu.api, gpu.id)
EOF
}

export -f info
for step in "${steps[@]}"; do
  case $step in
    info) run_step info 30 bash -c info ;;
    dlpack)
      run_step dlpack 60 env MAX_C_REQUIRE_GPU=1 "$python" -m pytest -q -rs -p no:cacheprovider \
        bindings/python/tests/test_dlpack_gpu.py bindings/python/tests/test_gpu_capture.py ;;
    ops)
      run_step ops "${GPU_CHECK_OPS_S:-280}" env MAX_C_TEST_DEVICE=gpu MAX_C_REQUIRE_GPU=1 "$python" -m pytest -q \
        -p no:cacheprovider -n 8 --junitxml="$out/ops.xml" bindings/python/tests/ops ;;
    bench)
      run_step bench "${GPU_CHECK_BENCH_S:-200}" env MAX_C_BENCH_PYTHON="$python" bash bench/run.sh onnx \
        --device gpu --cases minilm-s128,bert-s128 --batches 1,8 --threads 2 --out "$out/onnx-bench" ;;
    *) echo "gpu_check: unknown step '$step' (info dlpack ops bench)" >&2; exit 2 ;;
  esac
done

echo "== verdicts"
status=0
for step in "${steps[@]}"; do
  echo "$step: ${verdict[$step]}"
  [[ ${verdict[$step]} == ok* ]] || status=1
done
exit $status
