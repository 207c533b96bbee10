// The weights registry: files of every format, tensors from memory, names in order, zero-copy
// views that keep their mapping alive, the copy path for unaligned bytes, and duplicates.
#include "weights/registry.h"

#include <atomic>
#include <thread>

#include "gguf_image.h"
#include "test_util.h"
#include "weights/gguf_writer.h"
#include "weights/safetensors.h"
#include "weights/safetensors_writer.h"

namespace maxc::testing {
namespace {

std::vector<uint8_t> f32_bytes(std::vector<float> v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

class Registry : public ::testing::Test {
 protected:
  void SetUp() override {
    w_ = f32_bytes({1, 2, 3, 4, 5, 6});
    b_ = pattern(4, 9);
    write_safetensors(dir_.path("a.safetensors"),
                      {{"w", DType::kFloat32, {2, 3}, w_}, {"b", DType::kInt8, {4}, b_}});
    q_ = pattern(2 * 144, 5);
    write_gguf(dir_.path("b.gguf"), {{"general.name", GgufValue{std::string("b")}}},
               {{"q", DType::kUInt8, QuantEncoding::kQ4_K, {2, 256}, q_},
                {"n", DType::kFloat32, QuantEncoding::kNone, {2, 3}, w_}});
  }

  ScratchDir dir_;
  std::vector<uint8_t> w_, b_, q_;
};

TEST_F(Registry, FilesOfBothFormats) {
  auto r = WeightsRegistry::create();
  EXPECT_EQ(r->kind(), ObjectKind::kWeights);
  r->add_file(dir_.path("a.safetensors"));
  r->add_file(dir_.path("b.gguf"));
  EXPECT_EQ(r->size(), 4u);
  EXPECT_EQ(r->names(), (std::vector<std::string>{"w", "b", "q", "n"}));
  EXPECT_TRUE(r->contains("q"));
  EXPECT_FALSE(r->contains("x"));

  const WeightInfo& w = r->info("w");
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.dtype, DType::kFloat32);
  EXPECT_EQ(w.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(w.logical_dims, w.dims);
  EXPECT_EQ(w.encoding, QuantEncoding::kNone);

  const WeightInfo& q = r->info("q");
  EXPECT_EQ(q.dtype, DType::kUInt8);
  EXPECT_EQ(q.encoding, QuantEncoding::kQ4_K);
  EXPECT_EQ(q.dims, (std::vector<int64_t>{2, 144}));
  EXPECT_EQ(q.logical_dims, (std::vector<int64_t>{2, 256}));

  Ref<Tensor> tw = r->tensor("w");
  EXPECT_EQ(tw->dtype(), DType::kFloat32);
  EXPECT_EQ(tw->dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(tw->read_only());
  EXPECT_TRUE(tw->device()->is_host());
  EXPECT_EQ(std::memcmp(tw->data(), w_.data(), w_.size()), 0);
  Ref<Tensor> tq = r->tensor("q");
  EXPECT_EQ(tq->dims(), (std::vector<int64_t>{2, 144}));
  EXPECT_EQ(std::memcmp(tq->data(), q_.data(), q_.size()), 0);
  // Two views of one weight share the mapping: nothing was copied.
  EXPECT_EQ(r->tensor("w")->data(), tw->data());
  EXPECT_EQ(std::memcmp(r->tensor("n")->data(), w_.data(), w_.size()), 0);
}

TEST_F(Registry, ZeroCopyViewsHoldTheMapping) {
  auto file = MappedFile::open(dir_.path("a.safetensors"));
  auto r = WeightsRegistry::create();
  r->add_entries(read_safetensors(file).entries, file->path());
  const long base = file.use_count();
  Ref<Tensor> t = r->tensor("w");
  EXPECT_TRUE(file->contains(t->data(), t->byte_size()));
  EXPECT_EQ(file.use_count(), base + 1);
  r = Ref<WeightsRegistry>();  // the view outlives the registry
  EXPECT_EQ(std::memcmp(t->data(), w_.data(), w_.size()), 0);
  EXPECT_EQ(file.use_count(), 2);  // ours and the view's
  t = Ref<Tensor>();
  EXPECT_EQ(file.use_count(), 1);
}

// A float32 tensor at data offset 1 cannot be viewed in place: the registry copies it.
TEST_F(Registry, UnalignedBytesAreCopied) {
  std::string header =
      R"({"u":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"f":{"dtype":"F32","shape":[2],"data_offsets":[1,9]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<uint8_t> data = {7};
  const auto f = f32_bytes({1.5f, -2.0f});
  data.insert(data.end(), f.begin(), f.end());
  write_bytes(dir_.path("u.safetensors"), safetensors_image(header, data));
  auto file = MappedFile::open(dir_.path("u.safetensors"));
  auto r = WeightsRegistry::create();
  r->add_entries(read_safetensors(file).entries, file->path());

  Ref<Tensor> t = r->tensor("f");
  EXPECT_FALSE(file->contains(t->data(), 1));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 4, 0u);
  EXPECT_TRUE(t->read_only());
  EXPECT_EQ(std::memcmp(t->data(), f.data(), 8), 0);
  // uint8 is never misaligned.
  EXPECT_TRUE(file->contains(r->tensor("u")->data(), 1));
}

TEST_F(Registry, AddedTensors) {
  auto r = WeightsRegistry::create();
  auto t = Tensor::create(Device::cpu(), DType::kFloat32, {3});
  r->add_tensor("mem", t);
  EXPECT_EQ(r->tensor("mem").get(), t.get());  // shared, not copied
  EXPECT_EQ(r->info("mem").dims, (std::vector<int64_t>{3}));

  auto q = Tensor::create(Device::cpu(), DType::kUInt8, {4, 68});  // two 34-byte blocks a row
  r->add_tensor("q8", q, QuantEncoding::kQ8_0);
  EXPECT_EQ(r->info("q8").logical_dims, (std::vector<int64_t>{4, 64}));
  EXPECT_EQ(r->info("q8").encoding, QuantEncoding::kQ8_0);
  EXPECT_EQ(r->names(), (std::vector<std::string>{"mem", "q8"}));

  EXPECT_MAXC_ERROR(r->add_tensor("mem", t), Code::kAlreadyExists, "'mem'");
  EXPECT_MAXC_ERROR(r->add_tensor("bad", t, QuantEncoding::kQ8_0), Code::kInvalidArgument, "'bad'", "uint8");
  EXPECT_MAXC_ERROR(r->add_tensor("bad", Tensor::create(Device::cpu(), DType::kUInt8, {4, 35}), QuantEncoding::kQ8_0),
                    Code::kInvalidArgument, "'bad'", "multiple of 34");
  EXPECT_MAXC_ERROR(r->add_tensor("bad", Tensor::create(Device::cpu(), DType::kUInt8, {}), QuantEncoding::kQ4_0),
                    Code::kInvalidArgument, "'bad'");
  EXPECT_MAXC_ERROR(r->add_tensor("bad", Tensor::create(Device::cpu(), DType::kUInt8, {18}),
                                  static_cast<QuantEncoding>(42)),
                    Code::kInvalidArgument, "'bad'", "42");
  EXPECT_MAXC_ERROR(r->add_tensor("bad", Ref<Tensor>()), Code::kInvalidArgument, "'bad'", "null");
  EXPECT_MAXC_ERROR(r->add_tensor("", t), Code::kInvalidArgument, "name");
  EXPECT_EQ(r->size(), 2u);
}

TEST_F(Registry, MissingWeightsAreNotFound) {
  auto r = WeightsRegistry::create();
  r->add_file(dir_.path("a.safetensors"));
  EXPECT_MAXC_ERROR(r->info("nope"), Code::kNotFound, "weight 'nope'");
  EXPECT_MAXC_ERROR(r->tensor("nope"), Code::kNotFound, "weight 'nope'");
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("nope.gguf")), Code::kNotFound, "nope.gguf");
}

TEST_F(Registry, FilesAreAddedAllOrNothing) {
  auto r = WeightsRegistry::create();
  r->add_file(dir_.path("a.safetensors"));
  // "b" is taken; "fresh" must not be added either.
  write_safetensors(dir_.path("c.safetensors"), {{"fresh", DType::kInt8, {4}, b_}, {"b", DType::kInt8, {4}, b_}});
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("c.safetensors")), Code::kAlreadyExists, "c.safetensors", "'b'");
  EXPECT_EQ(r->names(), (std::vector<std::string>{"w", "b"}));
  EXPECT_FALSE(r->contains("fresh"));
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("a.safetensors")), Code::kAlreadyExists, "'w'");
  // A corrupt file adds nothing.
  std::vector<uint8_t> bad = read_bytes(dir_.path("b.gguf"));
  bad.resize(bad.size() - 1);
  write_bytes(dir_.path("bad.gguf"), bad);
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("bad.gguf")), Code::kDataLoss, "bad.gguf");
  EXPECT_EQ(r->size(), 2u);
  // Info references survive later additions.
  const WeightInfo& w = r->info("w");
  for (int i = 0; i < 100; ++i) r->add_tensor("t" + std::to_string(i), Tensor::create(Device::cpu(), DType::kInt8, {1}));
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(r->names().back(), "t99");
}

TEST_F(Registry, FormatFromNameOrContent) {
  namespace fs = std::filesystem;
  fs::copy_file(dir_.path("a.safetensors"), dir_.path("A.SafeTensors"));
  fs::copy_file(dir_.path("a.safetensors"), dir_.path("st_without_extension"));
  fs::copy_file(dir_.path("b.gguf"), dir_.path("gguf_without_extension"));
  auto r = WeightsRegistry::create();
  r->add_file(dir_.path("A.SafeTensors"));
  EXPECT_EQ(r->size(), 2u);
  r = WeightsRegistry::create();
  r->add_file(dir_.path("st_without_extension"));
  r->add_file(dir_.path("gguf_without_extension"));
  EXPECT_EQ(r->size(), 4u);

  write_bytes(dir_.path("notes.txt"), {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'});
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("notes.txt")), Code::kInvalidArgument, "notes.txt", "format");
  write_bytes(dir_.path("empty.bin"), {});
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("empty.bin")), Code::kInvalidArgument, "empty.bin");
  EXPECT_MAXC_ERROR(r->add_file(dir_.dir()), Code::kInvalidArgument, "directory");
  // The name decides even when the content disagrees.
  fs::copy_file(dir_.path("b.gguf"), dir_.path("liar.safetensors"));
  EXPECT_MAXC_ERROR(r->add_file(dir_.path("liar.safetensors")), Code::kDataLoss, "liar.safetensors");
  EXPECT_EQ(r->size(), 4u);
}

TEST_F(Registry, ShardedIndex) {
  write_safetensors(dir_.path("s2.safetensors"), {{"v", DType::kInt8, {4}, b_}});
  const std::string index = R"({"weight_map": {"v": "s2.safetensors", "w": "a.safetensors", "b": "a.safetensors"}})";
  write_bytes(dir_.path("model.safetensors.index.json"), std::vector<uint8_t>(index.begin(), index.end()));
  auto r = WeightsRegistry::create();
  r->add_file(dir_.path("model.safetensors.index.json"));
  EXPECT_EQ(r->names(), (std::vector<std::string>{"v", "w", "b"}));
  EXPECT_EQ(std::memcmp(r->tensor("w")->data(), w_.data(), w_.size()), 0);
}

TEST_F(Registry, ConcurrentReads) {
  auto r = WeightsRegistry::create();
  r->add_file(dir_.path("a.safetensors"));
  r->add_file(dir_.path("b.gguf"));
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int k = 0; k < 500; ++k) {
        Ref<Tensor> t = r->tensor(k % 2 ? "w" : "q");
        if (r->info("n").dims.size() == 2 && t->byte_size() > 0) ++good;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 2000);
}

}  // namespace
}  // namespace maxc::testing
