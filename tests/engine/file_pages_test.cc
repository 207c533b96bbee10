// A weight mapped from its file leaves the resident set once the model has packed a copy
// of it, and reads back from the file when a plan needs the original again; memory that is
// not a file mapping is never released. A deferred weight (a misaligned one's copy) is packed
// from a transient copy, and made only when a plan reads it in place.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "engine_test_util.h"
#include "weights/registry.h"
#include "weights/safetensors_writer.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

constexpr int64_t kIn = 256, kOut = 1024;  // a 1 MiB weight

// The resident bytes (kB) of this process's mapping that holds the tensor, from
// /proc/self/smaps: mincore would not do, since it reports the page cache, not the mapping.
int64_t resident_kb(const Tensor& t) {
  const auto address = reinterpret_cast<uintptr_t>(t.data());
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(' ') < line.find(':')) {
      inside = address >= begin && address < end;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

Ref<Model> linear_model(const Ref<Tensor>& w) {
  Graph g("linear");
  ValueId x = g.add_input("x", f32({"batch", kIn}));
  ValueId wv = g.add_weight("w", f32({kIn, kOut}));
  g.set_outputs({{"y", g.add_op("matmul", {x, wv})[0]}});
  return Model::create(CompiledModel::compile(Context::create({}), g, {}), {{"w", w}});
}

// y = x + w: reads w as it is.
Ref<Model> add_model(const Ref<Tensor>& w) {
  Graph g("add");
  ValueId x = g.add_input("x", f32({kIn, kOut}));
  ValueId wv = g.add_weight("w", f32({kIn, kOut}));
  g.set_outputs({{"y", g.add_op("add", {x, wv})[0]}});
  return Model::create(CompiledModel::compile(Context::create({}), g, {}), {{"w", w}});
}

// y[i][j] = sum_p x[i][p] w[p][j], in double.
void expect_product(const Ref<Tensor>& x, const Ref<Tensor>& w, const Ref<Tensor>& y) {
  const auto* xv = reinterpret_cast<const float*>(x->data());
  const auto* wv = reinterpret_cast<const float*>(w->data());
  const auto* yv = reinterpret_cast<const float*>(y->data());
  for (int64_t i = 0; i < x->dims()[0]; ++i)
    for (int64_t j = 0; j < kOut; j += 97) {
      double s = 0;
      for (int64_t p = 0; p < kIn; ++p) s += double(xv[i * kIn + p]) * wv[p * kOut + j];
      ASSERT_NEAR(yv[i * kOut + j], s, 1e-3) << i << "," << j;
    }
}

TEST(FilePages, MappedWeightsAreReleasedOncePackedAndReadBackWhenNeeded) {
  const std::string path = ::testing::TempDir() + "maxc_file_pages_" + std::to_string(::getpid()) + ".safetensors";
  Ref<Tensor> source = random_tensor({kIn, kOut}, 5);
  write_safetensors(path, {{"w", source}});
  auto registry = WeightsRegistry::create();
  registry->add_file(path);
  Ref<Tensor> w = registry->tensor("w");
  ASSERT_TRUE(w->storage()->file_pages()) << "a zero-copy view of the mapping";
  auto model = linear_model(w);

  Ref<Tensor> x7 = random_tensor({7, kIn}, 6);
  expect_product(x7, source, model->execute(std::vector<Ref<Tensor>>{x7})[0]);  // packs w
  EXPECT_LT(resident_kb(*w), 64) << "the packed copy serves; the file's pages (1 MiB) were released";

  Ref<Tensor> zeros = Tensor::create(Device::cpu(), DType::kFloat32, {kIn, kOut}, /*zero=*/true);
  const Ref<Tensor> sum = add_model(w)->execute(std::vector<Ref<Tensor>>{zeros})[0];  // reads the original
  EXPECT_EQ(std::memcmp(sum->data(), source->data(), source->byte_size()), 0);
  EXPECT_GT(resident_kb(*w), 512) << "read back from the file";
  std::remove(path.c_str());
}

TEST(FilePages, MemoryThatIsNoFileMappingIsKept) {
  Ref<Tensor> w = random_tensor({kIn, kOut}, 8);
  ASSERT_FALSE(w->storage()->file_pages());
  auto model = linear_model(w);
  Ref<Tensor> x7 = random_tensor({7, kIn}, 9);
  model->execute(std::vector<Ref<Tensor>>{x7});
  w->drop_file_pages();  // a no-op here, whoever calls it
  const auto* wv = reinterpret_cast<const float*>(w->data());
  const Ref<Tensor> again = random_tensor({kIn, kOut}, 8);
  EXPECT_EQ(std::memcmp(wv, again->data(), w->byte_size()), 0) << "the values are intact";
}

TEST(FilePages, DeferredWeightsAreMadeOnlyWhenAPlanReadsThemInPlace) {
  const Ref<Tensor> source = random_tensor({kIn, kOut}, 10);
  int fills = 0;
  Ref<Storage> storage = Storage::deferred(source->byte_size(), [&](void* dst) {
    ++fills;
    std::memcpy(dst, source->data(), source->byte_size());
  });
  const Ref<Tensor> w = Tensor::view_of(storage, 0, DType::kFloat32, {kIn, kOut}, {}, /*read_only=*/true);
  auto model = linear_model(w);
  for (int64_t rows : {7, 3}) {  // two plans: the packed copy is made once
    Ref<Tensor> x = random_tensor({rows, kIn}, 11);
    expect_product(x, source, model->execute(std::vector<Ref<Tensor>>{x})[0]);
  }
  EXPECT_EQ(fills, 1) << "packed from one transient copy; no copy kept";

  Ref<Tensor> zeros = Tensor::create(Device::cpu(), DType::kFloat32, {kIn, kOut}, /*zero=*/true);
  auto adder = add_model(w);
  for (int k = 0; k < 2; ++k) {
    const Ref<Tensor> sum = adder->execute(std::vector<Ref<Tensor>>{zeros})[0];
    EXPECT_EQ(std::memcmp(sum->data(), source->data(), source->byte_size()), 0);
  }
  EXPECT_EQ(fills, 2) << "made for the plan that reads it in place, once";
}

}  // namespace
}  // namespace maxc
