#!/usr/bin/env bash
# The long fuzz run (the issue's >= 10^6 inputs per target): one target for SECONDS in
# libFuzzer's fork mode, which goes on after a crash, a leak, an out-of-memory or a timeout
# and keeps every such input, so one run finds many bugs instead of the first.
#
#   bash fuzz/long_run.sh TARGET SECONDS [JOBS]     (after `bash scripts/build.sh asan`)
#
# Writes build-asan/fuzz-long/TARGET/: corpus/ (what the run learnt), artifacts/ (crash-*, leak-*,
# oom-*, timeout-*) and log; the last line printed is the number of inputs run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source fuzz/env.sh
target=$1 seconds=$2 jobs=${3:-1}
out=build-asan/fuzz-long/$target
mkdir -p "$out/corpus" "$out/artifacts"
dirs=(fuzz/corpus/"$target")
[[ -d fuzz/regressions/$target ]] && dirs+=(fuzz/regressions/"$target")
"$MAX_C_FUZZ_BIN/fuzz_$target" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
  -max_total_time="$seconds" "${MAX_C_FUZZ_LIMITS[@]}" $(max_c_fuzz_flags "$target") \
  -artifact_prefix="$out/artifacts/" "$out/corpus" "${dirs[@]}" >"$out/log" 2>&1 || true
# Fork mode reports "#N: cov: ... exec/s: ..." lines; N is the inputs run so far.
grep -oE '^#[0-9]+' "$out/log" | tail -n 1 | tr -d '#'
