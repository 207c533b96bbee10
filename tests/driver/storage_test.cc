// Storage: owned memory and borrowed memory whose release runs exactly once.
#include "driver/storage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "driver/tensor.h"
#include "driver/test_util.h"

namespace maxc {
namespace {

TEST(Storage, AllocateOnTheDevice) {
  auto s = Storage::allocate(Device::cpu(), 128, /*zero=*/true);
  ASSERT_NE(s->data(), nullptr);
  EXPECT_EQ(s->kind(), ObjectKind::kStorage);
  EXPECT_EQ(s->device().get(), Device::cpu().get());
  const auto* p = static_cast<const uint8_t*>(s->data());
  for (int i = 0; i < 128; ++i) EXPECT_EQ(p[i], 0);
}

TEST(Storage, BorrowReleasesOnceAtTheLastReference) {
  int memory = 5;
  int released = 0;
  {
    auto s = Storage::borrow(Device::cpu(), &memory, [&released] { ++released; });
    EXPECT_EQ(s->data(), &memory);
    Ref<Storage> copy = s;
    Ref<Storage> moved = std::move(s);
    EXPECT_EQ(released, 0);
    copy = Ref<Storage>();
    EXPECT_EQ(released, 0);
  }
  EXPECT_EQ(released, 1);
}

TEST(Storage, BorrowWithoutReleaseFunction) {
  int memory = 5;
  auto s = Storage::borrow(Device::cpu(), &memory, nullptr);
  EXPECT_EQ(s->data(), &memory);
  s = Ref<Storage>();  // nothing to call, nothing to crash
}

TEST(Storage, DisarmDropsTheReleaseUnrun) {
  int released = 0;
  {
    auto s = Storage::borrow(Device::cpu(), nullptr, [&released] { ++released; });
    s->disarm();
  }
  EXPECT_EQ(released, 0);
}

TEST(Storage, ViewsKeepItAlive) {
  std::vector<float> memory(6, 1.5f);
  int released = 0;
  auto s = Storage::borrow(Device::cpu(), memory.data(), [&released] { ++released; });
  auto a = Tensor::view_of(s, 0, DType::kFloat32, {2, 3}, {}, false);
  auto b = Tensor::view_of(s, 4, DType::kFloat32, {5}, {}, true);
  s = Ref<Storage>();
  a = Ref<Tensor>();
  EXPECT_EQ(released, 0);
  float out[5];
  b->to_host(out, sizeof(out));
  EXPECT_EQ(out[4], 1.5f);
  b = Ref<Tensor>();
  EXPECT_EQ(released, 1);
}

TEST(Storage, ReleaseOnceUnderConcurrentReferences) {
  std::atomic<int> released{0};
  std::vector<int> memory(16);
  for (int round = 0; round < 20; ++round) {
    auto s = Storage::borrow(Device::cpu(), memory.data(), [&released] { ++released; });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([s]() mutable {
        for (int i = 0; i < 1000; ++i) {
          Ref<Storage> local = s;
          (void)local;
        }
      });
    s = Ref<Storage>();
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(released.load(), 20);
}

}  // namespace
}  // namespace maxc
