#!/usr/bin/env bash
# One line per input that a fuzz target failed on: the file, what the sanitizer or libFuzzer
# said, and the first frame in the library (src/ or kernels/), so inputs group by bug.
#
#   bash fuzz/triage.sh TARGET FILE...        (e.g. build-asan/fuzz-long/onnx_structured/artifacts/*)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source fuzz/env.sh
target=$1
shift
for input in "$@"; do
  out=$(timeout 60 "$MAX_C_FUZZ_BIN/fuzz_$target" "${MAX_C_FUZZ_LIMITS[@]}" $(max_c_fuzz_flags "$target") "$input" 2>&1)
  rc=$?
  what=$(grep -m1 -oE 'SUMMARY: .*|ERROR: libFuzzer: [a-z-]+|runtime error: .*' <<<"$out" | cut -c1-120)
  frame=$(grep -m1 -oE '(src|kernels)/[A-Za-z0-9_/]+\.(cc|h):[0-9]+' <<<"$out")
  [[ $rc == 124 ]] && what="hang (over 60 s)"
  printf '%s\t%s\t%s\n' "$(basename "$input")" "${frame:-?}" "${what:-exit $rc}"
done
