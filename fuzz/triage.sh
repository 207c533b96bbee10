#!/usr/bin/env bash
# One line per input that a fuzz target failed on: the file, what the sanitizer or libFuzzer
# said, and the first frame in the library (src/ or kernels/), so inputs group by bug.
#
#   bash fuzz/triage.sh TARGET FILE...        (e.g. build-fuzz/long/onnx_structured/artifacts/*)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=$1
shift
for input in "$@"; do
  out=$(ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        timeout 60 "build-fuzz/fuzz/fuzz_$target" -timeout=10 -rss_limit_mb=2048 "$input" 2>&1)
  rc=$?
  what=$(grep -m1 -oE 'SUMMARY: .*|ERROR: libFuzzer: [a-z-]+|runtime error: .*' <<<"$out" | cut -c1-120)
  frame=$(grep -m1 -oE '(src|kernels)/[A-Za-z0-9_/]+\.(cc|h):[0-9]+' <<<"$out")
  [[ $rc == 124 ]] && what="hang (over 60 s)"
  printf '%s\t%s\t%s\n' "$(basename "$input")" "${frame:-?}" "${what:-exit $rc}"
done
