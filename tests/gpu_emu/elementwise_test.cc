// elementwise.cu under the emulator: the catalog's unary, binary and where instances over
// broadcast, transposed and reversed operand layouts, against the CPU's scalar ops
// (kernels/cpu/elementwise_ops.h) applied to the same stored inputs. Float results may
// differ by the libraries' last bits (the CPU's vector exp, sin, ... against libm) and so by
// a rounding step of the stored type; integer and bool results must be exact.
#include "gpu_emu/cuda_emulator.h"
#include "kernels/cuda/elementwise.cu"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "gpu_emu/cpu_reference.h"
#include "gpu_emu/emu_test_util.h"

namespace maxc::gpu_emu::testing {
namespace {

using cpu::ElemOp;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kRows = 6, kCols = 37;

// Values every op should survive: random ones plus the edges of the domain of each type.
template <class S>
std::vector<S> probe_values(int64_t n, unsigned seed) {
  const bool is_float = std::is_floating_point_v<typename g::ComputeOf<S>::type>;
  std::vector<S> v = random_values<S>(n, is_float ? -4 : -1000, is_float ? 4 : 1000, seed);
  const std::vector<double> edges =
      is_float ? std::vector<double>{0.0, -0.0, 1.0, -1.0, 0.5, -2.5, kInf, -kInf, std::nan(""), 1e-3, 80, -90}
               : std::vector<double>{0, 1, -1, 2, 7, -7, 2147483647.0, -2147483648.0};
  for (std::size_t i = 0; i < edges.size() && i < v.size(); ++i) v[(i * 7 + seed) % v.size()] = from_double<S>(edges[i]);
  return v;
}

g::Shape matrix() {
  g::Shape s{};
  s.numel = kRows * kCols;
  s.rank = 2;
  s.dims[0] = kRows;
  s.dims[1] = kCols;
  return s;
}

g::Layout layout(int64_t row_stride, int64_t col_stride) {
  g::Layout l{};
  l.strides[0] = row_stride;
  l.strides[1] = col_stride;
  return l;
}

template <class Out>
Tolerance result_tolerance() {
  if constexpr (std::is_same_v<Out, float>) return {1e-6, 4e-6};  // a few ulps of float
  else return tolerance_for<Out>();
}

template <class Out>
void expect_results(const std::vector<Out>& got, const std::vector<Out>& want, const std::string& what) {
  if constexpr (std::is_floating_point_v<typename g::ComputeOf<Out>::type>) {
    expect_close(got, to_doubles(want), what, result_tolerance<Out>());
  } else {
    expect_same_bits(got, want, what);
  }
}

template <class In, class Out>
std::string name(const char* op) {
  return std::string(op) + " " + dtype_name(dtype_of<In>()) + " -> " + dtype_name(dtype_of<Out>());
}

// x is read transposed: a [cols, rows] buffer seen as [rows, cols].
template <class Op, ElemOp E, class In, class Out>
void check_unary(const char* op_name, Op op = Op(), cpu::elem::Params<CpuCompute<In>> params = {}) {
  using C = CpuCompute<In>;
  const auto x = probe_values<In>(kRows * kCols, 11);
  std::vector<Out> y(x.size()), want(x.size());
  emulate_launch(2, 64, g::unary<Op, In, Out>, x.data(), layout(1, kRows), y.data(), matrix(), op);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c)
      want[r * kCols + c] = cpu_store<Out>(cpu_unary<E, C>(cpu_load<C>(x[c * kRows + r]), params));
  expect_results(y, want, name<In, Out>(op_name));
}

// a is a full matrix read with its rows reversed; b is one row broadcast down the columns.
template <class Op, ElemOp E, class In, class Out>
void check_binary(const char* op_name) {
  using C = CpuCompute<In>;
  const auto a = probe_values<In>(kRows * kCols, 21), b = probe_values<In>(kCols, 22);
  std::vector<Out> y(a.size()), want(a.size());
  emulate_launch(3, 64, g::binary<Op, In, Out>, a.data() + (kRows - 1) * kCols, layout(-kCols, 1), b.data(),
                 layout(0, 1), y.data(), matrix());
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) {
      const C va = cpu_load<C>(a[(kRows - 1 - r) * kCols + c]), vb = cpu_load<C>(b[c]);
      want[r * kCols + c] = cpu_store<Out>(cpu::elem::apply2<E, C>(va, vb));
    }
  expect_results(y, want, name<In, Out>(op_name));
}

#define UNARY(Name, In, Out) check_unary<g::op::Name, ElemOp::k##Name, In, Out>(#Name)
#define BINARY(Name, In, Out) check_binary<g::op::Name, ElemOp::k##Name, In, Out>(#Name)

template <class S>
void check_float_only_unary() {
  UNARY(Acos, S, S);
  UNARY(Atanh, S, S);
  UNARY(Cos, S, S);
  UNARY(Erf, S, S);
  UNARY(Exp, S, S);
  UNARY(Log, S, S);
  UNARY(Log1p, S, S);
  UNARY(Rsqrt, S, S);
  UNARY(Sigmoid, S, S);
  UNARY(Silu, S, S);
  UNARY(Sin, S, S);
  UNARY(Sqrt, S, S);
  UNARY(Tanh, S, S);
  UNARY(GeluErf, S, S);
  UNARY(GeluTanh, S, S);
  UNARY(GeluQuick, S, S);
  UNARY(Reciprocal, S, S);
  UNARY(IsInf, S, g::bool8);
  UNARY(IsNan, S, g::bool8);
}

template <class S>
void check_numeric_unary() {
  UNARY(Abs, S, S);
  UNARY(Negate, S, S);
  UNARY(Relu, S, S);
  UNARY(Floor, S, S);
  UNARY(Round, S, S);
  UNARY(Trunc, S, S);
  UNARY(Square, S, S);
  UNARY(Cube, S, S);
  using C = typename g::ComputeOf<S>::type;
  const g::op::Clamp<C> clamp{C(-2), C(3)};
  check_unary<g::op::Clamp<C>, ElemOp::kClamp, S, S>("Clamp", clamp, {CpuCompute<S>(-2), CpuCompute<S>(3)});
}

template <class S>
void check_numeric_binary() {
  BINARY(Add, S, S);
  BINARY(Sub, S, S);
  BINARY(Mul, S, S);
  BINARY(Div, S, S);
  BINARY(Mod, S, S);
  BINARY(Pow, S, S);
  BINARY(Max, S, S);
  BINARY(Min, S, S);
  BINARY(Equal, S, g::bool8);
  BINARY(NotEqual, S, g::bool8);
  BINARY(Greater, S, g::bool8);
  BINARY(GreaterEqual, S, g::bool8);
  BINARY(Less, S, g::bool8);
  BINARY(LessEqual, S, g::bool8);
}

TEST(EmulatedElementwise, FloatUnaryOps) {
  check_float_only_unary<float>();
  check_float_only_unary<g::half>();
  check_float_only_unary<g::bfloat16>();
}

TEST(EmulatedElementwise, NumericUnaryOps) {
  check_numeric_unary<float>();
  check_numeric_unary<g::half>();
  check_numeric_unary<g::bfloat16>();
  check_numeric_unary<g::i32>();
  check_numeric_unary<g::i64>();
}

TEST(EmulatedElementwise, BinaryOpsWithABroadcastOperand) {
  check_numeric_binary<float>();
  check_numeric_binary<g::half>();
  check_numeric_binary<g::bfloat16>();
  check_numeric_binary<g::i32>();
  check_numeric_binary<g::i64>();
}

TEST(EmulatedElementwise, LogicalOps) {
  UNARY(LogicalNot, g::bool8, g::bool8);
  BINARY(LogicalAnd, g::bool8, g::bool8);
  BINARY(LogicalOr, g::bool8, g::bool8);
  BINARY(LogicalXor, g::bool8, g::bool8);
}

// Integers of every width the catalog holds, and bools (where they are the logical ops).
template <class S>
void check_bitwise() {
  BINARY(BitwiseAnd, S, S);
  BINARY(BitwiseOr, S, S);
  BINARY(BitwiseXor, S, S);
  if constexpr (!std::is_same_v<S, g::bool8>) UNARY(BitwiseNot, S, S);
}

TEST(EmulatedElementwise, BitwiseOps) {
  check_bitwise<g::bool8>();
  check_bitwise<g::u8>();
  check_bitwise<g::i8>();
  check_bitwise<g::i16>();
  check_bitwise<g::i32>();
  check_bitwise<g::i64>();
  check_bitwise<g::u64>();
}

// condition broadcast along the rows, x transposed, y a single broadcast value.
template <class W>
void check_where() {
  const auto condition = random_values<g::u8>(kCols, 0, 3, 31);  // 0, 1 and 2: any nonzero byte is true
  std::vector<W> x(kRows * kCols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<W>(i * 977 + 3);
  const W y = static_cast<W>(-5);
  std::vector<W> out(x.size()), want(x.size());
  emulate_launch(2, 64, g::where<W>, reinterpret_cast<const g::bool8*>(condition.data()), layout(0, 1), x.data(),
                 layout(1, kRows), &y, layout(0, 0), out.data(), matrix());
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < kCols; ++c) want[r * kCols + c] = condition[c] ? x[c * kRows + r] : y;
  expect_same_bits(out, want, "where of " + std::to_string(sizeof(W)) + "-byte words");
}

TEST(EmulatedElementwise, WhereOfEveryWordWidth) {
  check_where<g::u8>();
  check_where<g::u16>();
  check_where<g::u32>();
  check_where<g::u64>();
}

}  // namespace
}  // namespace maxc::gpu_emu::testing
