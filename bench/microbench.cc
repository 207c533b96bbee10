// max_c microbenchmarks through the public ABI (DESIGN §10):
//   * matmul GFLOP/s at transformer sizes, against the machine's float32 peak (measured with
//     FMA chains on every thread, and the nominal ~198 GFLOP/s of the dev/CI machine);
//   * a dense layer (matmul + bias + gelu) with and without the epilogue fusion;
//   * the per-call overhead of max_model_execute on a one-op graph;
//   * block-quantized matrix-vector products (qmatmul) in GB/s of weights, against the
//     machine's measured memory read bandwidth and the float32 matvec.
// Other engineers may share the machine: every figure is the best of several rounds.
//
//   max_c_bench [num_threads]     (0 or nothing: one thread per core)
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "abi_model.h"
#include "peak_flops.h"
#include "quant_matvec.h"
#include "timing.h"

namespace bench {
namespace {

constexpr double kNominalPeakGflops = 198.0;  // DESIGN §10: 2 cores, AVX2 FMA

struct Dense {
  int64_t m, k, n;
};

double time_matmul(const Context& ctx, Dense d, bool bias_gelu, bool fuse) {
  GraphBuilder g("matmul");
  max_value_t* y = g.op("matmul", {g.input("x", {d.m, d.k}), g.weight("w", {d.k, d.n})});
  if (bias_gelu) y = g.op("gelu", {g.op("add", {y, g.weight("b", {d.n})})});
  g.output(y);
  const HostTensor w = HostTensor::random({d.k, d.n}, 0.05f, 1), b = HostTensor::random({d.n}, 0.1f, 2);
  const HostTensor x = HostTensor::random({d.m, d.k}, 1.f, 3);
  std::vector<std::string> names{"w"};
  std::vector<const HostTensor*> weights{&w};
  if (bias_gelu) names.push_back("b"), weights.push_back(&b);
  const Model model(ctx, g, names, weights, fuse);
  max_tensor_t* input = borrow(x);
  const double s = best_seconds_per_call([&] { model.execute({input}); }, 5, 0.25);
  max_tensor_release(input);
  return s;
}

void matmul_table(const Context& ctx, double peak) {
  std::printf("\nmatmul, float32 (M x K @ K x N), best of 5 rounds:\n");
  std::printf("  %-22s %10s %10s %12s %12s\n", "M x K x N", "ms", "GFLOP/s", "of measured", "of 198");
  for (Dense d : {Dense{128, 384, 384}, Dense{128, 384, 1536}, Dense{128, 1536, 384}, Dense{1024, 1024, 1024}}) {
    const double s = time_matmul(ctx, d, false, true);
    const double gflops = 2.0 * d.m * d.k * d.n / s / 1e9;
    char label[64];
    std::snprintf(label, sizeof label, "%lld x %lld x %lld", (long long)d.m, (long long)d.k, (long long)d.n);
    std::printf("  %-22s %10.3f %10.1f %11.0f%% %11.0f%%\n", label, s * 1e3, gflops,
                peak > 0 ? 100 * gflops / peak : 0.0, 100 * gflops / kNominalPeakGflops);
  }
}

void fusion_line(const Context& ctx) {
  const Dense d{128, 384, 1536};
  const double fused = time_matmul(ctx, d, true, true), plain = time_matmul(ctx, d, true, false);
  std::printf("\ndense layer gelu(x @ w + b), 128 x 384 x 1536: fused %.3f ms, unfused %.3f ms "
              "(fused/unfused = %.2f)\n",
              fused * 1e3, plain * 1e3, fused / plain);
}

void overhead_line(const Context& ctx) {
  GraphBuilder g("one_op");
  g.output(g.op("relu", {g.input("x", {1})}));
  const Model model(ctx, g, {}, {});
  const HostTensor x = HostTensor::random({1}, 1.f, 4);
  max_tensor_t* input = borrow(x);
  const double s = best_seconds_per_call([&] { model.execute({input}); }, 5, 0.2);
  max_tensor_release(input);
  std::printf("\nexecute overhead, one-op graph (relu on float32[1]), input check + plan + output "
              "tensor: %.2f us per call (target <= 5 us: %.2fx of it)\n",
              s * 1e6, s * 1e6 / 5.0);
}

int run(int argc, char** argv) {
  const int32_t threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const Context ctx(threads);
  std::printf("max_c %s microbenchmarks, %d thread(s)\n", max_version_string(), ctx.num_threads());
  const double peak = measured_peak_gflops(ctx.num_threads(), 0.5);
  std::printf("float32 peak: measured %.1f GFLOP/s with FMA chains on %d thread(s); nominal %.0f\n", peak,
              ctx.num_threads(), kNominalPeakGflops);
  matmul_table(ctx, peak);
  fusion_line(ctx);
  overhead_line(ctx);
  quant_matvec_table(ctx);
  return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  try {
    return bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "max_c_bench: %s\n", e.what());
    return 1;
  }
}
