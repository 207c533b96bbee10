#!/usr/bin/env bash
# Configures and builds max_c with CMake and Ninja.
#
#   scripts/build.sh                      the `dev` preset: build/, RelWithDebInfo
#   scripts/build.sh asan                 the `asan` preset: build-asan/, clang -O1 + ASan + UBSan: the tests
#                                         and the libFuzzer targets of fuzz/
#   scripts/build.sh tsan                 the `tsan` preset: build-tsan/, Debug + ThreadSanitizer,
#                                         the library and the concurrency tests only
#   scripts/build.sh DIR [-DVAR=VALUE...] any other build folder, with extra cache settings
#   ... --target NAME                     build only NAME (repeatable), e.g. example_demo
#
# A build folder configured for another source tree or generator is wiped first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_commands cmake ninja

where=dev
if [[ $# -gt 0 && $1 != -* ]]; then
  where=$1
  shift
fi
configure_args=()
build_args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --target) build_args+=(--target "$2"); shift 2 ;;
    -D*) configure_args+=("$1"); shift ;;
    *) die "unknown argument '$1' (see the comment at the top of scripts/build.sh)" ;;
  esac
done

case $where in
  dev) dir=$MAX_C_ROOT/build preset=dev ;;
  asan) dir=$MAX_C_ROOT/build-asan preset=asan ;;
  tsan) dir=$MAX_C_ROOT/build-tsan preset=tsan ;;
  *) dir=$(realpath -m "$where") preset= ;;
esac

cache=$dir/CMakeCache.txt
if [[ -f $cache ]]; then
  home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
  generator=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  if [[ $home != "$MAX_C_ROOT" || $generator != Ninja ]]; then
    log "$dir was configured for ${home:-?} with ${generator:-?}: starting it afresh"
    rm -rf "$dir"
  fi
fi

log "configuring $dir${preset:+ (preset $preset)}"
out=$(mktemp)
cd "$MAX_C_ROOT"
if [[ -n $preset ]]; then
  configure=(cmake --preset "$preset" "${configure_args[@]}")
  build=(cmake --build --preset "$preset" "${build_args[@]}")
else
  configure=(cmake -S "$MAX_C_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
             "${configure_args[@]}")
  build=(cmake --build "$dir" "${build_args[@]}")
fi
if ! "${configure[@]}" >"$out" 2>&1; then
  cat "$out" >&2
  rm -f "$out"
  die "configuring $dir failed"
fi
rm -f "$out"
log "building $dir"
"${build[@]}"
