// The machine's float32 peak, measured: every thread runs independent FMA chains of the
// widest vectors the CPU has (AVX-512 or AVX2), which is the most any kernel can get out of
// the cores.
#pragma once

namespace bench {

// GFLOP/s of `threads` threads running FMAs for about `seconds`; 0 when the CPU has no
// AVX2+FMA.
double measured_peak_gflops(int threads, double seconds);

}  // namespace bench
