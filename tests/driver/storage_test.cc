// Storage: owned memory, borrowed memory whose release runs exactly once, and deferred
// memory made on its first address.
#include "driver/storage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
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

// The fill runs once, for the first data() of any thread; read() before then fills a
// transient copy per call and makes nothing, and after it reads the made memory.
TEST(Storage, DeferredIsMadeOnItsFirstAddressOnly) {
  std::atomic<int> fills{0};
  auto s = Storage::deferred(64, [&fills](void* dst) {
    ++fills;
    for (int i = 0; i < 64; ++i) static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(i);
  });
  EXPECT_EQ(fills, 0);
  for (int k = 0; k < 2; ++k)
    s->read([](const void* p) { EXPECT_EQ(static_cast<const uint8_t*>(p)[63], 63); });
  EXPECT_EQ(fills, 2) << "a transient copy per read";

  std::vector<void*> seen(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = s->data(); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(fills, 3) << "made once";
  for (void* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(static_cast<const uint8_t*>(seen[0])[5], 5);
  s->read([&](const void* p) { EXPECT_EQ(p, seen[0]); });
  EXPECT_EQ(fills, 3);
}

TEST(Storage, DeferredFillThatThrowsMakesNothing) {
  bool fail = true;
  auto s = Storage::deferred(16, [&fail](void* dst) {
    if (fail) maxc::fail(Code::kDataLoss, "the source is gone");
    std::memset(dst, 7, 16);
  });
  EXPECT_THROW(s->data(), Error);
  EXPECT_THROW(s->read([](const void*) {}), Error);
  fail = false;
  EXPECT_EQ(static_cast<const uint8_t*>(s->data())[15], 7) << "the next call tries again";
}

}  // namespace
}  // namespace maxc
