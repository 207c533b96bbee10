// The machine's float32 peak, measured: every thread runs independent AVX2 FMA chains, which
// is the most any kernel can get out of the cores.
#pragma once

namespace bench {

// GFLOP/s of `threads` threads running FMAs for about `seconds`; 0 when the CPU has no
// AVX2+FMA.
double measured_peak_gflops(int threads, double seconds);

}  // namespace bench
