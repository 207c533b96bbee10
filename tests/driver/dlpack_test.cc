// DLPack export and import in C++: what the structs hold, who owns what, and that a failed
// import takes nothing (the deleter stays the caller's and is not called).
#include "driver/dlpack.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "driver/test_util.h"

namespace maxc {
namespace {

using ::maxc::testing::host_i32;
using ::maxc::testing::iota_i32;
using V = std::vector<int64_t>;

// A producer's tensor: memory, shape and strides it owns, and a deleter that counts.
template <typename Managed>
struct Producer {
  std::vector<int32_t> memory;
  V shape;
  V strides;
  int deleted = 0;
  Managed managed{};

  explicit Producer(V dims, bool with_strides = false) : shape(std::move(dims)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    memory.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) memory[i] = static_cast<int32_t>(i * 10);
    if (with_strides) strides = contiguous_strides(shape);
    DLTensor& dl = managed.dl_tensor;
    dl.data = memory.data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = DLDataType{kDLInt, 32, 1};
    dl.shape = shape.empty() ? nullptr : shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
    dl.byte_offset = 0;
    managed.manager_ctx = this;
    managed.deleter = [](Managed* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
      managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
      managed.flags = 0;
    }
  }
};

using VersionedProducer = Producer<DLManagedTensorVersioned>;
using UnversionedProducer = Producer<DLManagedTensor>;

// ---- export ----

TEST(DLPackExport, ContiguousTensor) {
  auto t = iota_i32({2, 3});
  DLManagedTensorVersioned* m = to_dlpack(t);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_GE(m->version.minor, 0u);
  EXPECT_EQ(m->flags, 0u);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.device.device_id, 0);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLInt);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(V(dl.shape, dl.shape + 2), (V{2, 3}));
  ASSERT_NE(dl.strides, nullptr);  // always filled
  EXPECT_EQ(V(dl.strides, dl.strides + 2), (V{3, 1}));
  EXPECT_EQ(static_cast<uint8_t*>(dl.data) + dl.byte_offset, t->data());
  ASSERT_NE(m->deleter, nullptr);
  m->deleter(m);
}

TEST(DLPackExport, KeepsTheTensorAlive) {
  int released = 0;
  std::vector<int32_t> memory = {1, 2, 3};
  auto t = Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {3}, {}, false,
                          [&released] { ++released; });
  DLManagedTensor* m = to_dlpack_unversioned(t);
  t = Ref<Tensor>();
  EXPECT_EQ(released, 0);
  EXPECT_EQ(static_cast<int32_t*>(m->dl_tensor.data)[2], 3);
  m->deleter(m);
  EXPECT_EQ(released, 1);
}

// A consumer that calls the deleter twice must not free twice: the second call does nothing
// (it once freed the holder a second time, a double free).
TEST(DLPackExport, SecondDeleterCallIsANoOp) {
  int released = 0;
  std::vector<int32_t> memory = {1, 2, 3};
  auto t = Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {3}, {}, false,
                          [&released] { ++released; });
  DLManagedTensorVersioned* versioned = to_dlpack(t);
  DLManagedTensor* unversioned = to_dlpack_unversioned(t);
  t = Ref<Tensor>();
  auto versioned_deleter = versioned->deleter;
  auto unversioned_deleter = unversioned->deleter;
  versioned_deleter(versioned);
  versioned_deleter(versioned);
  EXPECT_EQ(released, 0);  // the unversioned export still holds the tensor
  unversioned_deleter(unversioned);
  unversioned_deleter(unversioned);
  EXPECT_EQ(released, 1);
  versioned_deleter(nullptr);  // and a NULL struct is no export at all
}

TEST(DLPackExport, StridedViewWithOffsetAndReadOnly) {
  auto base = iota_i32({2, 3});
  // Rows reversed, starting at row 1.
  auto v = Tensor::view_of(base->storage(), 3 * sizeof(int32_t), DType::kInt32, {2, 3}, {-3, 1},
                           /*read_only=*/true);
  DLManagedTensorVersioned* m = to_dlpack(v);
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
  EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_IS_COPIED, 0u);
  EXPECT_EQ(m->dl_tensor.data, static_cast<void*>(base->data()));
  EXPECT_EQ(m->dl_tensor.byte_offset, 12u);
  EXPECT_EQ(V(m->dl_tensor.strides, m->dl_tensor.strides + 2), (V{-3, 1}));
  m->deleter(m);
}

TEST(DLPackExport, Scalar) {
  auto s = Tensor::create(Device::cpu(), DType::kFloat64, {});
  DLManagedTensorVersioned* m = to_dlpack(s);
  EXPECT_EQ(m->dl_tensor.ndim, 0);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 64);
  m->deleter(m);
}

TEST(DLPackExport, Device) {
  DLDevice d = dlpack_device(*Device::cpu());
  EXPECT_EQ(d.device_type, kDLCPU);
  EXPECT_EQ(d.device_id, 0);
}

TEST(DLPackExport, EveryDTypeRoundTrips) {
  for (DType dtype : {DType::kBool, DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64,
                      DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64,
                      DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
                      DType::kFloat8E4M3Fn, DType::kFloat8E4M3Fnuz, DType::kFloat8E5M2,
                      DType::kFloat8E5M2Fnuz, DType::kFloat4E2M1Fn, DType::kUInt2, DType::kInt2,
                      DType::kUInt4, DType::kInt4, DType::kFloat8E8M0Fnu}) {
    auto t = Tensor::create(Device::cpu(), dtype, {4});
    DLManagedTensorVersioned* m = to_dlpack(t);
    EXPECT_EQ(m->dl_tensor.dtype.bits, dtype_size_in_bits(dtype)) << dtype_name(dtype);
    auto back = from_dlpack(m);  // takes ownership of m
    EXPECT_EQ(back->dtype(), dtype) << dtype_name(dtype);
    EXPECT_EQ(back->data(), t->data()) << dtype_name(dtype);
  }
}

// DLPack's integer codes with 2 and 4 bits are the packed sub-byte integers.
TEST(DLPackExport, SubByteIntegersUseTheIntegerCodes) {
  const struct {
    DType dtype;
    uint8_t code, bits;
  } cases[] = {{DType::kUInt2, kDLUInt, 2}, {DType::kInt2, kDLInt, 2}, {DType::kUInt4, kDLUInt, 4},
               {DType::kInt4, kDLInt, 4}};
  for (const auto& c : cases) {
    auto t = Tensor::create(Device::cpu(), c.dtype, {5});
    DLManagedTensorVersioned* m = to_dlpack(t);
    EXPECT_EQ(m->dl_tensor.dtype.code, c.code) << dtype_name(c.dtype);
    EXPECT_EQ(m->dl_tensor.dtype.bits, c.bits) << dtype_name(c.dtype);
    m->deleter(m);
  }
}

// DLPack 1.1 has a code of its own for float8_e8m0fnu, and it comes back as ours.
TEST(DLPackExport, Float8E8M0FnuHasItsOwnCode) {
  auto t = Tensor::create(Device::cpu(), DType::kFloat8E8M0Fnu, {3});
  DLManagedTensorVersioned* m = to_dlpack(t);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat8_e8m0fnu);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 8);
  EXPECT_EQ(from_dlpack(m)->dtype(), DType::kFloat8E8M0Fnu);
}

// ---- import ----

TEST(DLPackImport, SharesMemoryAndDeletesOnceAtTheLastView) {
  VersionedProducer p({2, 3});
  {
    auto t = from_dlpack(&p.managed);
    EXPECT_EQ(t->dtype(), DType::kInt32);
    EXPECT_EQ(t->dims(), (V{2, 3}));
    EXPECT_EQ(t->strides(), (V{3, 1}));  // NULL strides: row-major
    EXPECT_FALSE(t->read_only());
    EXPECT_EQ(t->data(), reinterpret_cast<uint8_t*>(p.memory.data()));
    auto v = t->view(DType::kFloat32, nullptr);
    t = Ref<Tensor>();
    EXPECT_EQ(p.deleted, 0);
    EXPECT_EQ(v->byte_size(), 24u);
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPackImport, StridesOffsetAndReadOnlyFlag) {
  VersionedProducer p({2, 3}, /*with_strides=*/true);
  // Present the 2x3 as its 3x2 transpose, skipping nothing; then a second import with offset.
  V tshape = {3, 2}, tstrides = {1, 3};
  p.managed.dl_tensor.shape = tshape.data();
  p.managed.dl_tensor.strides = tstrides.data();
  p.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  {
    auto t = from_dlpack(&p.managed);
    EXPECT_TRUE(t->read_only());
    EXPECT_FALSE(t->is_contiguous());
    EXPECT_EQ(host_i32(*t), (std::vector<int32_t>{0, 30, 10, 40, 20, 50}));
  }
  EXPECT_EQ(p.deleted, 1);

  VersionedProducer q({4});
  q.managed.dl_tensor.byte_offset = 2 * sizeof(int32_t);
  V two = {2};
  q.managed.dl_tensor.shape = two.data();
  {
    auto t = from_dlpack(&q.managed);
    EXPECT_EQ(host_i32(*t), (std::vector<int32_t>{20, 30}));
  }
  EXPECT_EQ(q.deleted, 1);
}

TEST(DLPackImport, HostDeviceVariantsAreTheCpu) {
  for (DLDeviceType type : {kDLCPU, kDLCUDAHost, kDLROCMHost}) {
    VersionedProducer p({2});
    p.managed.dl_tensor.device = DLDevice{type, 0};
    auto t = from_dlpack(&p.managed);
    EXPECT_TRUE(t->device()->is_host()) << type;
  }
}

TEST(DLPackImport, ScalarAndEmpty) {
  VersionedProducer s({});
  {
    auto t = from_dlpack(&s.managed);
    EXPECT_EQ(t->rank(), 0);
    EXPECT_EQ(host_i32(*t), std::vector<int32_t>{0});
  }
  EXPECT_EQ(s.deleted, 1);

  VersionedProducer e({0, 3});
  e.managed.dl_tensor.data = nullptr;  // allowed when there are no elements
  {
    auto t = from_dlpack(&e.managed);
    EXPECT_EQ(t->num_elements(), 0);
  }
  EXPECT_EQ(e.deleted, 1);
}

TEST(DLPackImport, NullDeleterIsAllowed) {
  VersionedProducer p({3});
  p.managed.deleter = nullptr;
  auto t = from_dlpack(&p.managed);
  t = Ref<Tensor>();
  EXPECT_EQ(p.deleted, 0);
}

TEST(DLPackImport, UnversionedIsNeverReadOnly) {
  UnversionedProducer p({2, 2});
  {
    auto t = from_dlpack_unversioned(&p.managed);
    EXPECT_FALSE(t->read_only());
    EXPECT_EQ(host_i32(*t), (std::vector<int32_t>{0, 10, 20, 30}));
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(DLPackImport, RoundTripThroughExport) {
  int released = 0;
  std::vector<int32_t> memory = {4, 5, 6, 7};
  auto t = Tensor::borrow(Device::cpu(), memory.data(), 0, DType::kInt32, {2, 2}, {}, false,
                          [&released] { ++released; });
  auto back = from_dlpack(to_dlpack(t));
  EXPECT_EQ(back->data(), t->data());
  t = Ref<Tensor>();
  EXPECT_EQ(released, 0);
  EXPECT_EQ(host_i32(*back), memory);
  back = Ref<Tensor>();  // runs the export's deleter, which drops the last view
  EXPECT_EQ(released, 1);

  auto u = iota_i32({3});
  auto back_u = from_dlpack_unversioned(to_dlpack_unversioned(u));
  EXPECT_EQ(host_i32(*back_u), (std::vector<int32_t>{0, 1, 2}));
}

// A failed import leaves the struct the caller's: no deleter call, and the caller may still
// call it (exactly once) afterwards.
template <typename Producer, typename Import>
void expect_import_fails(Producer& p, Import import, Code code, const char* piece) {
  EXPECT_MAXC_ERROR(import(&p.managed), code, piece);
  EXPECT_EQ(p.deleted, 0) << piece;
  p.managed.deleter(&p.managed);
  EXPECT_EQ(p.deleted, 1) << piece;
}

TEST(DLPackImport, FailuresLeaveOwnershipWithTheCaller) {
  auto imp = [](DLManagedTensorVersioned* m) { return from_dlpack(m); };
  {
    VersionedProducer p({2});
    p.managed.version.major = 2;
    expect_import_fails(p, imp, Code::kInvalidArgument, "DLPack major version 2");
  }
  {
    VersionedProducer p({2});
    p.managed.version.major = 0;
    expect_import_fails(p, imp, Code::kInvalidArgument, "major version 0");
  }
  {
    VersionedProducer p({2});
    p.managed.flags = DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
    expect_import_fails(p, imp, Code::kUnimplemented, "padded sub-byte");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.dtype.lanes = 4;
    expect_import_fails(p, imp, Code::kUnimplemented, "4 lanes");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.dtype = DLDataType{kDLComplex, 64, 1};
    expect_import_fails(p, imp, Code::kInvalidArgument, "code 5 with 64 bits");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.dtype = DLDataType{kDLFloat, 24, 1};
    expect_import_fails(p, imp, Code::kInvalidArgument, "24 bits");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.ndim = -1;
    expect_import_fails(p, imp, Code::kInvalidArgument, "ndim -1");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.ndim = kMaxRank + 1;
    expect_import_fails(p, imp, Code::kInvalidArgument, "ndim 65");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.shape = nullptr;
    expect_import_fails(p, imp, Code::kInvalidArgument, "NULL shape");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.data = nullptr;
    expect_import_fails(p, imp, Code::kInvalidArgument, "NULL data");
  }
  {
    VersionedProducer p({2, 3});
    p.shape[1] = -3;
    expect_import_fails(p, imp, Code::kInvalidArgument, "negative");
  }
  {
    // Sizes that wrap: FLOAT64 [2^58 + 1] is 2^64 + 64 bits.
    VersionedProducer p({2});
    p.shape[0] = (int64_t{1} << 58) + 1;
    p.managed.dl_tensor.dtype = DLDataType{kDLFloat, 64, 1};
    expect_import_fails(p, imp, Code::kResourceExhausted, "too many elements");
  }
  {
    VersionedProducer p({int64_t{1} << 32, 0});  // no memory: the dims multiply to 0
    p.shape[1] = (int64_t{1} << 32) + 1;
    expect_import_fails(p, imp, Code::kResourceExhausted, "too many elements");
  }
  {
    VersionedProducer p({2, 2}, /*with_strides=*/true);
    p.strides[0] = int64_t{1} << 62;
    expect_import_fails(p, imp, Code::kInvalidArgument, "reach more than");
  }
  {
    VersionedProducer p({2, 2}, /*with_strides=*/true);
    p.strides[1] = INT64_MIN;
    expect_import_fails(p, imp, Code::kInvalidArgument, "reach more than");
  }
  {
    VersionedProducer p({2});
    p.managed.dl_tensor.device = DLDevice{kDLVulkan, 0};
    expect_import_fails(p, imp, Code::kUnimplemented, "device type 7");
  }
  if (Device::accelerator_count() == 0) {
    VersionedProducer p({2});
    p.managed.dl_tensor.device = DLDevice{kDLCUDA, 0};
    expect_import_fails(p, imp, Code::kNotFound, "no CUDA device");
  }
}

TEST(DLPackImport, UnversionedFailuresLeaveOwnershipWithTheCaller) {
  auto imp = [](DLManagedTensor* m) { return from_dlpack_unversioned(m); };
  {
    UnversionedProducer p({2});
    p.managed.dl_tensor.dtype.lanes = 2;
    expect_import_fails(p, imp, Code::kUnimplemented, "2 lanes");
  }
  {
    UnversionedProducer p({2});
    p.managed.dl_tensor.device = DLDevice{kDLMetal, 0};
    expect_import_fails(p, imp, Code::kUnimplemented, "device type 8");
  }
  {
    UnversionedProducer p({2});
    p.managed.dl_tensor.shape = nullptr;
    expect_import_fails(p, imp, Code::kInvalidArgument, "NULL shape");
  }
}

}  // namespace
}  // namespace maxc
