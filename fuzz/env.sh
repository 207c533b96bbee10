# Sourced by every script that runs a fuzz target (scripts/test.sh's fuzz suite,
# fuzz/long_run.sh, fuzz/triage.sh), so a verdict means the same wherever it is reproduced.
#
# ASan's max_allocation_size_mb makes any single allocation over 1 GiB fail inside the library
# (allocator_may_return_null: malloc returns NULL, operator new throws), as on a machine that
# is out of memory. A legal model can ask for more (a Pad of 150994945 rows is valid ONNX); the
# library must answer RESOURCE_EXHAUSTED and stay usable, which this exercises, instead of
# libFuzzer reporting the big allocation as an out-of-memory finding. RSS growth over many
# smaller allocations is still bounded by -rss_limit_mb.
export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:max_allocation_size_mb=1024
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The one sanitizer tree (the asan preset) holds the fuzz targets; a long run may point this at
# an -O1 tree (fuzz/README.md).
MAX_C_FUZZ_BIN=${MAX_C_FUZZ_BIN:-build-asan/fuzz}
# What bounds each input, for every run.
MAX_C_FUZZ_LIMITS=(-timeout=10 -rss_limit_mb=2048 -max_len=4096)

# Flags of one target. graph_builder's inputs reach some 30,000 coverage features, and libFuzzer's
# entropic scheduler then spends 60% of the run updating their frequencies (perf): that target
# uses the classic scheduler, four times the inputs per second.
max_c_fuzz_flags() {
  case $1 in
    graph_builder) echo -entropic=0 ;;
  esac
}
