// Truncated, corrupt and lying weights files. Each must be refused with a maxc::Error (never a
// crash, a hang or an allocation beyond what the file's size justifies), or parse into entries
// whose bytes lie inside the file. Run under ASan+UBSan in CI, where the in-memory images'
// exact-size buffers make any read past the end fatal.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <random>

#include "gguf_image.h"
#include "test_util.h"
#include "weights/gguf.h"
#include "weights/gguf_writer.h"
#include "weights/registry.h"
#include "weights/safetensors.h"
#include "weights/safetensors_writer.h"

// The largest single allocation while a tracker is alive. Replacing the global operator new is
// the one way to see allocations made inside the standard library's containers.
namespace {
std::atomic<bool> g_tracking{false};
std::atomic<size_t> g_largest{0};
}  // namespace

void* operator new(std::size_t n) {
  if (g_tracking.load(std::memory_order_relaxed)) {
    size_t seen = g_largest.load(std::memory_order_relaxed);
    while (n > seen && !g_largest.compare_exchange_weak(seen, n, std::memory_order_relaxed)) {
    }
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
// Every other form too, so that no allocation pairs our free() with another allocator's new.
void* operator new[](std::size_t n) { return ::operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return ::operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t al) {
  const auto a = static_cast<std::size_t>(al);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a + (n ? 0 : a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t al) { return ::operator new(n, al); }
void* operator new(std::size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(n, al);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, std::align_val_t al, const std::nothrow_t& t) noexcept {
  return ::operator new(n, al, t);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace maxc::testing {
namespace {

class LargestAllocation {
 public:
  LargestAllocation() {
    g_largest = 0;
    g_tracking = true;
  }
  ~LargestAllocation() { g_tracking = false; }
  size_t bytes() const { return g_largest.load(); }
};

std::vector<uint8_t> sample_safetensors() {
  ScratchDir dir;
  const auto a = pattern(24, 1), b = pattern(5, 2), c = pattern(8, 3);
  write_safetensors(dir.path("s.safetensors"),
                    {{"layer.w", DType::kFloat32, {2, 3}, a}, {"layer.b", DType::kInt8, {5}, b},
                     {"norm", DType::kBFloat16, {4}, c}},
                    {{"format", "pt"}});
  return read_bytes(dir.path("s.safetensors"));
}

std::vector<uint8_t> sample_gguf() {
  ScratchDir dir;
  const auto f = pattern(24, 1), q = pattern(34, 2), i = pattern(5, 3);
  std::vector<GgufKv> md = {
      {"general.architecture", GgufValue{std::string("llama")}},
      {"llama.context_length", GgufValue{uint32_t{2048}}},
      {"tokenizer.ggml.tokens", GgufValue{GgufArray{std::vector<std::string>{"<s>", "a", ""}}}},
      {"tokenizer.ggml.scores", GgufValue{GgufArray{std::vector<float>{0.5f, -1.0f}}}},
      {"nested", GgufValue{GgufArray{std::vector<GgufArray>{GgufArray{std::vector<bool>{true}}}}}},
      {"general.alignment", GgufValue{uint32_t{16}}},
  };
  write_gguf(dir.path("s.gguf"), md,
             {{"tok.w", DType::kFloat32, QuantEncoding::kNone, {2, 3}, f},
              {"blk.q", DType::kUInt8, QuantEncoding::kQ8_0, {1, 32}, q},
              {"blk.i", DType::kInt8, QuantEncoding::kNone, {5}, i}});
  return read_bytes(dir.path("s.gguf"));
}

std::vector<WeightEntry> parse_safetensors(const std::vector<uint8_t>& bytes, const std::string& name) {
  return read_safetensors(in_memory(bytes, name)).entries;
}
std::vector<WeightEntry> parse_gguf(const std::vector<uint8_t>& bytes, const std::string& name) {
  return read_gguf(in_memory(bytes, name)).entries;
}

// What a successful parse promises: every entry's bytes inside the file, sized for its dims,
// and readable through the registry (ASan checks every byte read).
void check_parsed(const std::vector<WeightEntry>& entries) {
  auto r = WeightsRegistry::create();
  r->add_entries(entries, "parsed");
  for (const WeightEntry& e : entries) {
    ASSERT_TRUE(e.file->contains(e.file->data() + e.offset, e.bytes)) << e.info.name;
    Ref<Tensor> t = r->tensor(e.info.name);
    ASSERT_EQ(t->byte_size(), e.bytes) << e.info.name;
    unsigned sum = 0;
    for (uint64_t k = 0; k < e.bytes; ++k) sum += t->data()[k];
    (void)sum;
  }
}

bool is_clean_refusal(Code c) { return c == Code::kDataLoss || c == Code::kInvalidArgument; }

template <typename Parse>
void every_prefix_fails(const std::vector<uint8_t>& full, const std::string& name, Parse parse) {
  ASSERT_NO_THROW(check_parsed(parse(full, name)));
  for (size_t n = 0; n < full.size(); ++n) {
    const std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      parse(prefix, name);
      ADD_FAILURE() << "a prefix of " << n << " of " << full.size() << " bytes parsed";
    } catch (const Error& e) {
      ASSERT_TRUE(is_clean_refusal(e.code())) << "prefix of " << n << ": " << e.what();
      ASSERT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

TEST(WeightsHostile, EveryPrefixOfASafetensorsFileFails) {
  every_prefix_fails(sample_safetensors(), "prefix.safetensors", parse_safetensors);
}

TEST(WeightsHostile, EveryPrefixOfAGgufFileFails) {
  every_prefix_fails(sample_gguf(), "prefix.gguf", parse_gguf);
}

// Random damage: 1 to 4 bytes replaced or bit-flipped per trial, from a fixed seed.
template <typename Parse>
void random_damage(const std::vector<uint8_t>& good, const std::string& name, Parse parse, uint32_t seed) {
  std::mt19937 rng(seed);
  int parsed = 0, refused = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      const size_t at = rng() % bytes.size();
      if (rng() % 2) bytes[at] = static_cast<uint8_t>(rng());
      else bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    LargestAllocation largest;
    try {
      std::vector<WeightEntry> entries = parse(bytes, name);
      check_parsed(entries);
      ++parsed;
    } catch (const Error& e) {
      ++refused;
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << "trial " << trial << ": " << e.what();
    }
    ASSERT_LT(largest.bytes(), 64 * 1024u) << "trial " << trial;
  }
  EXPECT_EQ(parsed + refused, 2000);
  EXPECT_GT(refused, 0);
}

TEST(WeightsHostile, RandomDamageToASafetensorsFile) {
  random_damage(sample_safetensors(), "flip.safetensors", parse_safetensors, 20240501);
}

TEST(WeightsHostile, RandomDamageToAGgufFile) {
  random_damage(sample_gguf(), "flip.gguf", parse_gguf, 20240502);
}

// A header that claims far more than the file holds must fail at once, allocating nothing
// near the claim.
template <typename F>
void fails_fast_and_small(F&& f, Code code, std::initializer_list<const char*> pieces) {
  LargestAllocation largest;
  const auto start = std::chrono::steady_clock::now();
  try {
    f();
    ADD_FAILURE() << "did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(code_name(e.code()), std::string(code_name(code))) << e.what();
    for (const char* p : pieces) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " / " << p;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  EXPECT_LT(largest.bytes(), 64 * 1024u);
}

TEST(WeightsHostile, GgufHugeCountsAndLengths) {
  auto gguf = [](const std::vector<uint8_t>& b) { return [b] { read_gguf(in_memory(b, "huge.gguf")); }; };
  fails_fast_and_small(gguf(GgufImage().counts(0, uint64_t{1} << 62).build()), Code::kDataLoss,
                       {"huge.gguf", "metadata pairs cannot fit", "offset 16"});
  fails_fast_and_small(gguf(GgufImage().counts(uint64_t{1} << 62, 0).build()), Code::kDataLoss,
                       {"huge.gguf", "tensor infos cannot fit", "offset 8"});
  fails_fast_and_small(gguf(GgufImage().counts(UINT64_MAX, UINT64_MAX).build()), Code::kDataLoss, {"cannot fit"});
  // An array of 2^60 uint32 in a file of a few dozen bytes.
  fails_fast_and_small(gguf(GgufImage().kv("tokens", 9, [](Bytes& b) { b.u32(4).u64(uint64_t{1} << 60); }).build()),
                       Code::kDataLoss, {"metadata key 'tokens'", "array of 1152921504606846976 uint32"});
  fails_fast_and_small(gguf(GgufImage().kv("tokens", 9, [](Bytes& b) { b.u32(8).u64(UINT64_MAX); }).build()),
                       Code::kDataLoss, {"metadata key 'tokens'", "cannot fit"});
  fails_fast_and_small(gguf(GgufImage().kv("s", 8, [](Bytes& b) { b.u64(uint64_t{1} << 63); }).build()),
                       Code::kDataLoss, {"metadata key 's'", "truncated"});
  // A key length past the format's limit, and one past the file.
  fails_fast_and_small(gguf(Bytes().raw("GGUF").u32(3).u64(0).u64(1).u64(uint64_t{1} << 40).raw("abcdefghijklm").bytes()),
                       Code::kDataLoss, {"metadata pair #0", "limit"});
  fails_fast_and_small(gguf(Bytes().raw("GGUF").u32(3).u64(0).u64(1).u64(60000).raw("abcdefghijklm").bytes()),
                       Code::kDataLoss, {"metadata pair #0", "truncated"});
  // A tensor name of 2^62 bytes, and n_dims of 2^31.
  fails_fast_and_small(gguf(Bytes().raw("GGUF").u32(3).u64(1).u64(0).u64(uint64_t{1} << 62).raw(std::string(24, 'x')).bytes()),
                       Code::kDataLoss, {"tensor info #0", "truncated"});
  fails_fast_and_small(gguf(Bytes().raw("GGUF").u32(3).u64(1).u64(0).str("t").u32(1u << 31).raw(std::string(24, 'x')).bytes()),
                       Code::kDataLoss, {"tensor 't'", "2147483648 dims"});
}

TEST(WeightsHostile, SafetensorsHugeLengths) {
  auto st = [](const std::vector<uint8_t>& b) { return [b] { read_safetensors(in_memory(b, "huge.safetensors")); }; };
  fails_fast_and_small(st(Bytes().u64(UINT64_MAX).raw("{}").bytes()), Code::kDataLoss,
                       {"huge.safetensors", "header length 18446744073709551615", "offset 0"});
  fails_fast_and_small(st(Bytes().u64(uint64_t{1} << 40).raw("{}").bytes()), Code::kDataLoss, {"runs past the end"});
  // A shape array far longer than any rank: refused at its 65th element.
  std::string shape = "[";
  for (int i = 0; i < 20000; ++i) shape += i ? ",1" : "1";
  shape += "]";
  fails_fast_and_small(st(safetensors_image(R"({"w":{"dtype":"U8","shape":)" + shape + R"(,"data_offsets":[0,1]}})", {0})),
                       Code::kDataLoss, {"tensor 'w'", "more than the maximum of 64 dims"});
  std::string offsets = "[0";
  for (int i = 0; i < 20000; ++i) offsets += ",0";
  offsets += "]";
  fails_fast_and_small(st(safetensors_image(R"({"w":{"dtype":"U8","shape":[0],"data_offsets":)" + offsets + "}}", {})),
                       Code::kDataLoss, {"tensor 'w'", "two integers"});
  fails_fast_and_small(
      st(safetensors_image(R"({"w":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,1]}})", {0})),
      Code::kDataLoss, {"tensor 'w'", "a dim is not a non-negative integer"});
  fails_fast_and_small(
      st(safetensors_image(R"({"w":{"dtype":"F64","shape":[2305843009213693952,2],"data_offsets":[0,0]}})", {})),
      Code::kDataLoss, {"tensor 'w'", "overflows"});
}

TEST(WeightsHostile, SafetensorsLyingOffsets) {
  const std::vector<uint8_t> data = pattern(32, 0);
  auto read = [&](const std::string& header) {
    return [header, &data] { read_safetensors(in_memory(safetensors_image(header, data), "lie.safetensors")); };
  };
  const char* entry_b = R"("b":{"dtype":"F32","shape":[2],"data_offsets":)";
  fails_fast_and_small(read(std::string("{") + entry_b + "[28,36]}}"), Code::kDataLoss,
                       {"lie.safetensors", "tensor 'b'", "run past the data section"});
  fails_fast_and_small(read(std::string("{") + entry_b + "[9223372036854775807,9223372036854775807]}}"),
                       Code::kDataLoss, {"tensor 'b'"});
  fails_fast_and_small(read(std::string("{") + entry_b + "[16,8]}}"), Code::kDataLoss, {"tensor 'b'", "before"});
  fails_fast_and_small(read(std::string("{") + entry_b + "[0,4]}}"), Code::kDataLoss, {"tensor 'b'", "needs 8"});
  fails_fast_and_small(
      read(std::string(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)") + entry_b + "[12,20]}}"),
      Code::kDataLoss, {"tensor 'b'", "overlap", "'a'"});
  fails_fast_and_small(
      read(std::string(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]},)") + entry_b + "[8,16]}}"),
      Code::kDataLoss, {"overlap"});
}

TEST(WeightsHostile, GgufLyingOffsets) {
  auto read = [](const GgufImage& img) { return [b = img.build()] { read_gguf(in_memory(b, "lie.gguf")); }; };
  const std::vector<uint8_t> data(64);
  fails_fast_and_small(read(GgufImage().tensor("t", {4}, 0, 64).data(data)), Code::kDataLoss,
                       {"lie.gguf", "tensor 't'", "run past the end"});
  fails_fast_and_small(read(GgufImage().tensor("t", {4}, 0, UINT64_MAX - 31).data(data)), Code::kDataLoss,
                       {"tensor 't'", "run past the end"});
  fails_fast_and_small(read(GgufImage().tensor("t", {uint64_t{1} << 61}, 0, 0).data(data)), Code::kDataLoss,
                       {"tensor 't'", "overflows"});
  fails_fast_and_small(read(GgufImage().tensor("t", {1u << 20}, 0, 0).data(data)), Code::kDataLoss,
                       {"tensor 't'", "4194304 bytes"});
  fails_fast_and_small(read(GgufImage().tensor("a", {16}, 0, 0).tensor("b", {8}, 0, 32).data(data)),
                       Code::kDataLoss, {"tensor 'b'", "overlap", "'a'"});
  // A quantized row claiming more blocks than the file holds.
  fails_fast_and_small(read(GgufImage().tensor("q", {uint64_t{1} << 40}, 8, 0).data(data)), Code::kDataLoss,
                       {"tensor 'q'", "run past the end"});
}

// An index naming shards by hostile paths, and a shard that is itself truncated.
TEST(WeightsHostile, SafetensorsIndexLies) {
  ScratchDir dir;
  std::vector<uint8_t> shard = sample_safetensors();
  shard.resize(shard.size() - 1);
  write_bytes(dir.path("cut.safetensors"), shard);
  const std::string index = R"({"weight_map": {"layer.w": "cut.safetensors"}})";
  write_bytes(dir.path("model.safetensors.index.json"), std::vector<uint8_t>(index.begin(), index.end()));
  EXPECT_MAXC_ERROR(read_safetensors_index(dir.path("model.safetensors.index.json")), Code::kDataLoss,
                    "cut.safetensors", "tensor 'layer.b'");
}

}  // namespace
}  // namespace maxc::testing
