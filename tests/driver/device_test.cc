// Device: one object per (kind, id), lookup errors, and host allocation.
#include "driver/device.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "driver/test_util.h"

namespace maxc {
namespace {

TEST(Device, CpuIsASingleton) {
  auto a = Device::cpu();
  auto b = Device::cpu();
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(Device::get(Device::Kind::kCpu, 0).get(), a.get());
  EXPECT_EQ(Device::get(Device::Kind::kCpu, -1).get(), a.get());
}

TEST(Device, CpuTraits) {
  auto cpu = Device::cpu();
  EXPECT_EQ(cpu->kind(), ObjectKind::kDevice);
  EXPECT_EQ(cpu->device_kind(), Device::Kind::kCpu);
  EXPECT_EQ(cpu->id(), 0);
  EXPECT_TRUE(cpu->is_host());
  EXPECT_STREQ(cpu->label(), "cpu");
  EXPECT_STREQ(cpu->api(), "cpu");
  EXPECT_EQ(cpu->name(), "cpu:0");
  EXPECT_NO_THROW(cpu->synchronize());
}

TEST(Device, CpuSurvivesAllReferences) {
  // Dropping every Ref must not free the process-wide device.
  Device* raw = nullptr;
  {
    auto cpu = Device::cpu();
    raw = cpu.get();
  }
  EXPECT_EQ(Device::cpu().get(), raw);
  EXPECT_EQ(Device::cpu()->name(), "cpu:0");
}

TEST(Device, UnknownCpuId) {
  EXPECT_MAXC_ERROR(Device::get(Device::Kind::kCpu, 1), Code::kNotFound, "no CPU device with id 1",
                    "0 or -1");
  EXPECT_MAXC_ERROR(Device::get(Device::Kind::kCpu, -2), Code::kNotFound, "id -2");
}

TEST(Device, MissingAcceleratorIsNotFound) {
  const int32_t count = Device::accelerator_count();
  ASSERT_GE(count, 0);
  EXPECT_MAXC_ERROR(Device::get(Device::Kind::kCuda, count), Code::kNotFound, "no CUDA device",
                    "accelerators");
  EXPECT_MAXC_ERROR(Device::get(Device::Kind::kHip, count + 3), Code::kNotFound, "no HIP device");
  if (count == 0) {
    EXPECT_MAXC_ERROR(Device::get(Device::Kind::kCuda, -1), Code::kNotFound, "sees 0 accelerators");
  }
}

TEST(Device, UnknownKindIsInvalidArgument) {
  EXPECT_MAXC_ERROR(Device::get(static_cast<Device::Kind>(7), 0), Code::kInvalidArgument,
                    "unknown device kind 7");
  EXPECT_MAXC_ERROR(Device::get(static_cast<Device::Kind>(0), 0), Code::kInvalidArgument,
                    "unknown device kind 0");
}

TEST(Device, AllocateIsAlignedAndZeroed) {
  auto cpu = Device::cpu();
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}}) {
    auto* p = static_cast<uint8_t*>(cpu->allocate(bytes, /*zero=*/true));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % Device::kAlignment, 0u) << bytes;
    for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(p[i], 0) << "byte " << i << " of " << bytes;
    cpu->deallocate(p);
  }
  void* a = cpu->allocate(0, false);
  void* b = cpu->allocate(0, false);
  EXPECT_NE(a, b);  // distinct pointers even for zero bytes
  cpu->deallocate(a);
  cpu->deallocate(b);
}

TEST(Device, AllocationFailures) {
  auto cpu = Device::cpu();
  EXPECT_MAXC_ERROR(cpu->allocate(SIZE_MAX - 10, false), Code::kResourceExhausted, "overflows");
  EXPECT_MAXC_ERROR(cpu->allocate(size_t{1} << 62, false), Code::kResourceExhausted,
                    "out of memory", "on cpu:0");
}

}  // namespace
}  // namespace maxc
