// Tensor: shape checks, creation, views, contiguity, copies and their error messages.
#include "driver/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "base/checked_math.h"
#include "driver/test_util.h"

#if defined(__SANITIZE_ADDRESS__)
// Out-of-memory is a status, not a crash: let ASan's allocator return NULL like libc's does.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace maxc {
namespace {

using ::maxc::testing::host_i32;
using ::maxc::testing::iota_i32;
using V = std::vector<int64_t>;

// ---- checked_num_elements and contiguous_strides ----

TEST(CheckedNumElements, CountsElements) {
  EXPECT_EQ(checked_num_elements(DType::kFloat32, {2, 3, 4}), 24);
  EXPECT_EQ(checked_num_elements(DType::kFloat32, {}), 1);  // a scalar
  EXPECT_EQ(checked_num_elements(DType::kInt8, {5, 0, 7}), 0);
  EXPECT_EQ(checked_num_elements(DType::kInt8, V(kMaxRank, 1)), 1);
}

TEST(CheckedNumElements, NegativeDimNamesTheDimAndShape) {
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat32, {2, -1}), Code::kInvalidArgument,
                    "dim 1 is negative", "[2, -1]");
}

TEST(CheckedNumElements, RankAboveMaximum) {
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat32, V(kMaxRank + 1, 1)),
                    Code::kInvalidArgument, "rank 65", "maximum of 64");
}

TEST(CheckedNumElements, UnknownDType) {
  EXPECT_MAXC_ERROR(checked_num_elements(static_cast<DType>(2), {1}), Code::kInvalidArgument,
                    "unknown dtype 2");
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kInvalid, {1}), Code::kInvalidArgument,
                    "unknown dtype 0");
}

TEST(CheckedNumElements, OverflowIsResourceExhausted) {
  const int64_t big = int64_t{1} << 32;
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat32, {big, big}), Code::kResourceExhausted,
                    "too many elements");
  EXPECT_MAXC_ERROR(
      checked_num_elements(DType::kUInt8, {std::numeric_limits<int64_t>::max(), 2}),
      Code::kResourceExhausted, "too many elements");
  // A zero dim makes the count zero, but the other dims must still multiply within the
  // limit: an empty tensor's strides are their products.
  EXPECT_EQ(checked_num_elements(DType::kFloat32, {big, 0, 1 << 20}), 0);
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat32, {big, 0, big}), Code::kResourceExhausted,
                    "too many elements");
}

// The limit leaves room for the widest dtype: its count in bits fits an int64, so every byte
// size is exact. FLOAT64 [2^58 + 1] was once accepted with a byte size of 8 (2^64 + 64 bits).
TEST(CheckedNumElements, LimitKeepsBytesAndBitsOfTheWidestDTypeInInt64) {
  EXPECT_EQ(checked_num_elements(DType::kFloat64, {kMaxElements}), kMaxElements);
  EXPECT_LE(static_cast<uint64_t>(kMaxElements) * 64, static_cast<uint64_t>(INT64_MAX));
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat64, {kMaxElements + 1}), Code::kResourceExhausted,
                    "too many elements", "144115188075855871");
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat64, {(int64_t{1} << 58) + 1}), Code::kResourceExhausted,
                    "too many elements");
  EXPECT_MAXC_ERROR(checked_num_elements(DType::kFloat32, {(int64_t{1} << 59) + 1}), Code::kResourceExhausted,
                    "too many elements");
  EXPECT_MAXC_ERROR(Tensor::create(Device::cpu(), DType::kFloat64, {(int64_t{1} << 58) + 1}),
                    Code::kResourceExhausted, "too many elements");
}

TEST(ContiguousStrides, RowMajor) {
  EXPECT_EQ(contiguous_strides({2, 3, 4}), (V{12, 4, 1}));
  EXPECT_EQ(contiguous_strides({}), V{});
  EXPECT_EQ(contiguous_strides({7}), V{1});
  EXPECT_EQ(contiguous_strides({1, 5}), (V{5, 1}));
  // Zero extents count as one so strides stay distinct and non-zero.
  EXPECT_EQ(contiguous_strides({2, 0, 3}), (V{3, 3, 1}));
}

TEST(DimsToString, Formats) {
  EXPECT_EQ(dims_to_string({}), "[]");
  EXPECT_EQ(dims_to_string({2, 3}), "[2, 3]");
}

// ---- creation ----

TEST(TensorCreate, ZeroFilledContiguous) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, {2, 3});
  EXPECT_EQ(t->dtype(), DType::kFloat32);
  EXPECT_EQ(t->rank(), 2);
  EXPECT_EQ(t->dims(), (V{2, 3}));
  EXPECT_EQ(t->strides(), (V{3, 1}));
  EXPECT_EQ(t->num_elements(), 6);
  EXPECT_EQ(t->byte_size(), 24u);
  EXPECT_EQ(t->byte_offset(), 0u);
  EXPECT_TRUE(t->is_contiguous());
  EXPECT_FALSE(t->read_only());
  EXPECT_EQ(t->device().get(), Device::cpu().get());
  EXPECT_EQ(t->kind(), ObjectKind::kTensor);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % Device::kAlignment, 0u);
  const float* p = reinterpret_cast<const float*>(t->data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(p[i], 0.0f);
}

TEST(TensorCreate, ScalarAndEmpty) {
  auto s = Tensor::create(Device::cpu(), DType::kFloat64, {});
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->num_elements(), 1);
  EXPECT_EQ(s->byte_size(), 8u);
  EXPECT_TRUE(s->strides().empty());
  EXPECT_TRUE(s->is_contiguous());

  auto e = Tensor::create(Device::cpu(), DType::kInt32, {3, 0});
  EXPECT_EQ(e->num_elements(), 0);
  EXPECT_EQ(e->byte_size(), 0u);
  EXPECT_NE(e->data(), nullptr);
  EXPECT_TRUE(e->is_contiguous());
}

TEST(TensorCreate, SubByteDTypeIsPacked) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat4E2M1Fn, {3});
  EXPECT_EQ(t->byte_size(), 2u);
  auto b = Tensor::create(Device::cpu(), DType::kBool, {3});
  EXPECT_EQ(b->byte_size(), 3u);
}

TEST(TensorCreate, BadShapes) {
  EXPECT_MAXC_ERROR(Tensor::create(Device::cpu(), DType::kFloat32, {-3}),
                    Code::kInvalidArgument, "negative", "[-3]");
  EXPECT_MAXC_ERROR(Tensor::create(Device::cpu(), DType::kInvalid, {3}), Code::kInvalidArgument,
                    "unknown dtype");
  const int64_t big = int64_t{1} << 40;
  EXPECT_MAXC_ERROR(Tensor::create(Device::cpu(), DType::kFloat32, {big, big}),
                    Code::kResourceExhausted, "too many elements");
}

TEST(TensorCreate, OutOfMemoryIsResourceExhausted) {
  // 2^56 bytes: a valid count that no machine can allocate.
  EXPECT_MAXC_ERROR(Tensor::create(Device::cpu(), DType::kUInt8, {int64_t{1} << 56}),
                    Code::kResourceExhausted, "out of memory", "cpu:0");
}

// ---- view_of and borrow ----

TEST(TensorViewOf, SharesStorage) {
  auto base = iota_i32({2, 3});
  auto row1 = Tensor::view_of(base->storage(), 3 * sizeof(int32_t), DType::kInt32, {3}, {},
                              /*read_only=*/true);
  EXPECT_EQ(row1->storage().get(), base->storage().get());
  EXPECT_EQ(row1->strides(), V{1});
  EXPECT_TRUE(row1->read_only());
  EXPECT_EQ(row1->data(), base->data() + 12);
  EXPECT_EQ(host_i32(*row1), (std::vector<int32_t>{3, 4, 5}));
  // Writes through the base show through the view.
  reinterpret_cast<int32_t*>(base->data())[4] = 40;
  EXPECT_EQ(host_i32(*row1), (std::vector<int32_t>{3, 40, 5}));
}

TEST(TensorViewOf, StridesMustMatchRank) {
  auto base = iota_i32({6});
  EXPECT_MAXC_ERROR(Tensor::view_of(base->storage(), 0, DType::kInt32, {2, 3}, {1}, false),
                    Code::kInvalidArgument, "strides have 1 entries for rank 2");
  EXPECT_MAXC_ERROR(Tensor::view_of(base->storage(), 0, DType::kInt32, {2, -3}, {}, false),
                    Code::kInvalidArgument, "negative");
}

TEST(TensorBorrow, ReleaseRunsOnceWhenTheLastViewGoes) {
  std::vector<int32_t> memory = {1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    auto t = Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {2, 3}, {}, false,
                            [&released] { ++released; });
    EXPECT_EQ(t->data(), reinterpret_cast<uint8_t*>(memory.data()));
    auto v = t->view(DType::kFloat32, nullptr);
    auto c = t->copy(Device::cpu());  // a copy has its own storage
    t = Ref<Tensor>();
    EXPECT_EQ(released, 0);
    EXPECT_EQ(host_i32(*c), memory);
    v = Ref<Tensor>();
    EXPECT_EQ(released, 1);
  }
  EXPECT_EQ(released, 1);
}

TEST(TensorBorrow, FailureNeverRunsRelease) {
  std::vector<int32_t> memory(6);
  int released = 0;
  auto count = [&released] { ++released; };
  EXPECT_MAXC_ERROR(Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {2, 3},
                                   {1, 2, 3}, false, count),
                    Code::kInvalidArgument, "strides have 3 entries for rank 2");
  EXPECT_MAXC_ERROR(Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {-2}, {},
                                   false, count),
                    Code::kInvalidArgument, "negative");
  EXPECT_MAXC_ERROR(Tensor::borrow(Device::cpu(), memory.data(), 0, static_cast<DType>(99), {2},
                                   {}, false, count),
                    Code::kInvalidArgument, "unknown dtype 99");
  EXPECT_EQ(released, 0);
}

TEST(TensorBorrow, ByteOffsetAndStrides) {
  // A column of a 3x4 row-major matrix, starting at column 2.
  std::vector<int32_t> memory(12);
  for (int i = 0; i < 12; ++i) memory[i] = i;
  auto col = Tensor::borrow(Device::cpu(), memory.data(), 2 * sizeof(int32_t), DType::kInt32,
                            {3}, {4}, true, nullptr);
  EXPECT_FALSE(col->is_contiguous());
  EXPECT_TRUE(col->read_only());
  EXPECT_EQ(host_i32(*col), (std::vector<int32_t>{2, 6, 10}));
}

// Strides that would address elements past the limit are refused, whatever memory is there:
// an offset computed from them would overflow.
TEST(TensorBorrow, StridesReachingPastTheLimitAreRefused) {
  std::vector<int32_t> memory(4);
  const int64_t huge = int64_t{1} << 62;
  for (const V& strides : {V{huge, 1}, V{-huge, 1}, V{INT64_MIN, 1}, V{kMaxElements, 1}}) {
    bool released = false;
    EXPECT_MAXC_ERROR(Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {2, 2}, strides, false,
                                     [&] { released = true; }),
                      Code::kInvalidArgument, "strides", "reach more than");
    EXPECT_FALSE(released);
  }
  // A size-1 dim may carry any stride, and an empty tensor addresses nothing.
  EXPECT_EQ(Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {1, 2}, {INT64_MIN, 1}, false, nullptr)
                ->num_elements(),
            2);
  EXPECT_EQ(Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {0, 2}, {huge, huge}, false, nullptr)
                ->num_elements(),
            0);
  EXPECT_MAXC_ERROR(Tensor::borrow(Device::cpu(), memory.data(), uint64_t{1} << 63, DType::kInt32, {2}, {1}, false,
                                   nullptr),
                    Code::kInvalidArgument, "byte offset");
}

// ---- is_contiguous ----

Ref<Tensor> strided_view(const Ref<Tensor>& base, V dims, V strides, uint64_t offset = 0) {
  return Tensor::view_of(base->storage(), offset, base->dtype(), std::move(dims),
                         std::move(strides), false);
}

TEST(TensorIsContiguous, RowMajorOnly) {
  auto base = iota_i32({2, 3});
  EXPECT_TRUE(strided_view(base, {2, 3}, {3, 1})->is_contiguous());
  EXPECT_FALSE(strided_view(base, {3, 2}, {1, 3})->is_contiguous());  // transposed
  EXPECT_FALSE(strided_view(base, {2, 3}, {6, 1})->is_contiguous());  // padded rows
  EXPECT_FALSE(strided_view(base, {3}, {2})->is_contiguous());
  EXPECT_FALSE(strided_view(base, {6}, {-1}, 20)->is_contiguous());  // reversed
}

TEST(TensorIsContiguous, SizeOneDimsMayHaveAnyStride) {
  auto base = iota_i32({2, 3});
  EXPECT_TRUE(strided_view(base, {1, 3}, {99, 1})->is_contiguous());
  EXPECT_TRUE(strided_view(base, {3, 1}, {1, 0})->is_contiguous());
  EXPECT_TRUE(strided_view(base, {2, 1, 3}, {3, -7, 1})->is_contiguous());
  EXPECT_TRUE(strided_view(base, {1}, {-1}, 4)->is_contiguous());
  EXPECT_TRUE(strided_view(base, {1, 1}, {0, 0})->is_contiguous());
}

TEST(TensorIsContiguous, EmptyAndScalar) {
  auto base = iota_i32({2, 3});
  EXPECT_TRUE(strided_view(base, {0, 3}, {5, 7})->is_contiguous());
  EXPECT_TRUE(strided_view(base, {3, 0}, {-1, 2})->is_contiguous());
  EXPECT_TRUE(strided_view(base, {}, {}, 8)->is_contiguous());
}

// ---- strided_copy ----

TEST(StridedCopy, Transpose) {
  const int32_t src[6] = {0, 1, 2, 3, 4, 5};  // a 2x3 matrix
  int32_t dst[6] = {};
  // dst (3x2, contiguous) = src transposed: read src with strides {1, 3}.
  strided_copy(reinterpret_cast<uint8_t*>(dst), {2, 1}, reinterpret_cast<const uint8_t*>(src),
               {1, 3}, {3, 2}, sizeof(int32_t));
  EXPECT_EQ(std::vector<int32_t>(dst, dst + 6), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
}

TEST(StridedCopy, NegativeStrides) {
  const double src[6] = {0, 1, 2, 3, 4, 5};
  double dst[6] = {};
  // Both dims reversed: start at the last element.
  strided_copy(reinterpret_cast<uint8_t*>(dst), {3, 1},
               reinterpret_cast<const uint8_t*>(src + 5), {-3, -1}, {2, 3}, sizeof(double));
  EXPECT_EQ(std::vector<double>(dst, dst + 6), (std::vector<double>{5, 4, 3, 2, 1, 0}));
}

TEST(StridedCopy, ScatterIntoStridedDestination) {
  const int16_t src[4] = {1, 2, 3, 4};
  int16_t dst[8] = {};
  strided_copy(reinterpret_cast<uint8_t*>(dst), {4, 2}, reinterpret_cast<const uint8_t*>(src),
               {2, 1}, {2, 2}, sizeof(int16_t));
  EXPECT_EQ(std::vector<int16_t>(dst, dst + 8), (std::vector<int16_t>{1, 0, 2, 0, 3, 0, 4, 0}));
}

TEST(StridedCopy, ThreeDimPermutation) {
  // src is 2x3x4 row-major; dst is its (2, 0, 1) permutation, 4x2x3.
  std::vector<int32_t> src(24), dst(24, -1);
  for (int i = 0; i < 24; ++i) src[i] = i;
  strided_copy(reinterpret_cast<uint8_t*>(dst.data()), {6, 3, 1},
               reinterpret_cast<const uint8_t*>(src.data()), {1, 12, 4}, {4, 2, 3},
               sizeof(int32_t));
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_EQ(dst[k * 6 + i * 3 + j], i * 12 + j * 4 + k);
}

TEST(StridedCopy, ScalarAndEmpty) {
  const int64_t src = 42;
  int64_t dst = 0;
  strided_copy(reinterpret_cast<uint8_t*>(&dst), {}, reinterpret_cast<const uint8_t*>(&src), {},
               {}, sizeof(int64_t));
  EXPECT_EQ(dst, 42);
  int64_t untouched = 7;
  strided_copy(reinterpret_cast<uint8_t*>(&untouched), {1, 1},
               reinterpret_cast<const uint8_t*>(&src), {1, 1}, {3, 0}, sizeof(int64_t));
  EXPECT_EQ(untouched, 7);
}

// ---- to_host, copy, copy_from, view ----

TEST(TensorToHost, ContiguousAndStridedViews) {
  auto base = iota_i32({2, 3});
  EXPECT_EQ(host_i32(*base), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(host_i32(*strided_view(base, {3, 2}, {1, 3})),
            (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  // Reversed: element 0 is the last one, so the view starts 5 elements in.
  EXPECT_EQ(host_i32(*strided_view(base, {6}, {-1}, 5 * sizeof(int32_t))),
            (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
  // Rows reversed, columns reversed.
  EXPECT_EQ(host_i32(*strided_view(base, {2, 3}, {-3, -1}, 5 * sizeof(int32_t))),
            (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
  // Broadcast (stride 0) and size-1 dims with odd strides.
  EXPECT_EQ(host_i32(*strided_view(base, {2, 3}, {0, 1}, 3 * sizeof(int32_t))),
            (std::vector<int32_t>{3, 4, 5, 3, 4, 5}));
  EXPECT_EQ(host_i32(*strided_view(base, {1, 3}, {42, 1})), (std::vector<int32_t>{0, 1, 2}));
}

TEST(TensorToHost, WrongSizeNamesBothSizes) {
  auto t = iota_i32({2, 3});
  std::vector<uint8_t> dst(5);
  EXPECT_MAXC_ERROR(t->to_host(dst.data(), dst.size()), Code::kInvalidArgument,
                    "to_host: destination has 5 bytes", "int32[2, 3]", "needs 24");
}

TEST(TensorToHost, EmptyTensor) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, {0, 4});
  EXPECT_NO_THROW(t->to_host(nullptr, 0));
}

TEST(TensorToHost, StridedSubByteIsUnimplemented) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat4E2M1Fn, {4, 2});
  auto v = Tensor::view_of(t->storage(), 0, DType::kFloat4E2M1Fn, {2, 4}, {1, 2}, false);
  std::vector<uint8_t> dst(4);
  EXPECT_MAXC_ERROR(v->to_host(dst.data(), dst.size()), Code::kUnimplemented,
                    "strided float4_e2m1fn");
}

TEST(TensorCopy, DeepAndContiguous) {
  auto base = iota_i32({2, 3});
  auto t = strided_view(base, {3, 2}, {1, 3});
  auto c = t->copy(Device::cpu());
  EXPECT_NE(c->storage().get(), base->storage().get());
  EXPECT_TRUE(c->is_contiguous());
  EXPECT_EQ(c->strides(), (V{2, 1}));
  EXPECT_FALSE(c->read_only());
  EXPECT_EQ(host_i32(*c), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  reinterpret_cast<int32_t*>(base->data())[0] = 100;  // the copy does not see it
  EXPECT_EQ(host_i32(*c)[0], 0);
}

TEST(TensorCopy, ReadOnlySourceGivesWritableCopy) {
  int32_t memory[3] = {7, 8, 9};
  auto ro = Tensor::borrow(Device::cpu(), memory, 0, DType::kInt32, {3}, {}, true, nullptr);
  auto c = ro->copy(Device::cpu());
  EXPECT_FALSE(c->read_only());
  EXPECT_EQ(host_i32(*c), (std::vector<int32_t>{7, 8, 9}));
}

TEST(TensorCopyFrom, StridedSourceAndDestination) {
  auto src = iota_i32({2, 3});
  auto dst = Tensor::create(Device::cpu(), DType::kInt32, {3, 2});
  dst->copy_from(*strided_view(src, {3, 2}, {1, 3}));
  EXPECT_EQ(host_i32(*dst), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));

  // Into a transposed view of a fresh 2x3: that writes src's transpose's transpose.
  auto out = Tensor::create(Device::cpu(), DType::kInt32, {2, 3});
  strided_view(out, {3, 2}, {1, 3})->copy_from(*dst);
  EXPECT_EQ(host_i32(*out), host_i32(*src));

  // Into a reversed view.
  auto rev = Tensor::create(Device::cpu(), DType::kInt32, {6});
  strided_view(rev, {6}, {-1}, 5 * sizeof(int32_t))->copy_from(*strided_view(src, {6}, {1}));
  EXPECT_EQ(host_i32(*rev), (std::vector<int32_t>{5, 4, 3, 2, 1, 0}));
}

TEST(TensorCopyFrom, MismatchNamesBothSides) {
  auto dst = Tensor::create(Device::cpu(), DType::kInt32, {2, 3});
  auto f = Tensor::create(Device::cpu(), DType::kFloat32, {2, 3});
  EXPECT_MAXC_ERROR(dst->copy_from(*f), Code::kInvalidArgument,
                    "copy_from: source is float32[2, 3], destination is int32[2, 3]");
  auto s = Tensor::create(Device::cpu(), DType::kInt32, {3, 2});
  EXPECT_MAXC_ERROR(dst->copy_from(*s), Code::kInvalidArgument, "source is int32[3, 2]",
                    "destination is int32[2, 3]");
}

TEST(TensorCopyFrom, ReadOnlyDestination) {
  int32_t memory[3] = {1, 2, 3};
  auto ro = Tensor::borrow(Device::cpu(), memory, 0, DType::kInt32, {3}, {}, true, nullptr);
  auto src = iota_i32({3});
  EXPECT_MAXC_ERROR(ro->copy_from(*src), Code::kFailedPrecondition,
                    "copy_from: the tensor is read-only");
  EXPECT_EQ(memory[0], 1);
  EXPECT_MAXC_ERROR(ro->check_writable("mutable_data"), Code::kFailedPrecondition,
                    "mutable_data: the tensor is read-only");
  EXPECT_NO_THROW(src->check_writable("x"));
}

TEST(TensorCopyFrom, SubByteIntoSizeOneDimWithOddStride) {
  // float4 [1, 4] is 2 bytes; a size-1 dim may have any stride and stay contiguous, so the
  // copy must move exactly 2 bytes and nothing past them.
  uint8_t memory[8] = {0, 0, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE, 0xEE};
  auto dst = Tensor::borrow(Device::cpu(), memory, 0, DType::kFloat4E2M1Fn, {1, 4}, {100, 1},
                            false, nullptr);
  ASSERT_TRUE(dst->is_contiguous());
  const uint8_t bytes[2] = {0x21, 0x43};
  auto src = Tensor::borrow(Device::cpu(), const_cast<uint8_t*>(bytes), 0,
                            DType::kFloat4E2M1Fn, {1, 4}, {}, true, nullptr);
  dst->copy_from(*src);
  EXPECT_EQ(memory[0], 0x21);
  EXPECT_EQ(memory[1], 0x43);
  for (int i = 2; i < 8; ++i) EXPECT_EQ(memory[i], 0xEE) << "byte " << i << " was overwritten";
}

TEST(TensorView, ReinterpretsTheSameBytes) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, {2, 3});
  reinterpret_cast<float*>(t->data())[1] = 1.0f;
  auto u = t->view(DType::kUInt32, nullptr);
  EXPECT_EQ(u->dims(), (V{2, 3}));
  EXPECT_EQ(u->storage().get(), t->storage().get());
  EXPECT_EQ(reinterpret_cast<const uint32_t*>(u->data())[1], 0x3f800000u);

  V flat = {24};
  auto b = t->view(DType::kUInt8, &flat);
  EXPECT_EQ(b->dims(), flat);
  EXPECT_EQ(b->strides(), V{1});
  V square = {3, 2};
  auto r = t->view(DType::kFloat32, &square);
  EXPECT_EQ(r->strides(), (V{2, 1}));
}

TEST(TensorView, KeepsOffsetAndReadOnly) {
  int32_t memory[4] = {1, 2, 3, 4};
  auto ro = Tensor::borrow(Device::cpu(), memory, 4, DType::kInt32, {3}, {}, true, nullptr);
  V two = {3, 1};
  auto v = ro->view(DType::kInt32, &two);
  EXPECT_TRUE(v->read_only());
  EXPECT_EQ(v->byte_offset(), 4u);
  EXPECT_EQ(host_i32(*v), (std::vector<int32_t>{2, 3, 4}));
}

TEST(TensorView, Errors) {
  auto t = iota_i32({2, 3});
  V four = {4};
  EXPECT_MAXC_ERROR(t->view(DType::kInt32, &four), Code::kInvalidArgument,
                    "view: int32[4] has 16 bytes, the tensor int32[2, 3] has 24");
  EXPECT_MAXC_ERROR(t->view(DType::kFloat64, nullptr), Code::kInvalidArgument,
                    "float64[2, 3] has 48 bytes");
  EXPECT_MAXC_ERROR(t->view(static_cast<DType>(3), nullptr), Code::kInvalidArgument,
                    "view: unknown dtype 3");
  V negative = {-6};
  EXPECT_MAXC_ERROR(t->view(DType::kInt32, &negative), Code::kInvalidArgument, "negative");
  auto transposed = strided_view(t, {3, 2}, {1, 3});
  EXPECT_MAXC_ERROR(transposed->view(DType::kInt32, nullptr), Code::kInvalidArgument,
                    "view: the tensor is not contiguous", "strides [1, 3]", "shape [3, 2]");
}

}  // namespace
}  // namespace maxc
