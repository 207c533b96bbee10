// A MAXG file whose data segment a compiled model reads in place, truncated under it: the read
// would be SIGBUS; the mapping guard (base/guarded_mapping.h) answers it, and the execute that
// read the file fails with DATA_LOSS naming it instead of returning results made of zeros.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "driver/test_util.h"
#include "engine_test_util.h"
#include "serialize/reader.h"
#include "serialize/writer.h"

namespace maxc {
namespace {

using engine_test::f32;

TEST(ShrinkingFile, AMaxgDataSegmentTruncatedUnderAModelIsDataLoss) {
  constexpr int64_t kN = 16384;  // 64 KiB: past the inline limit, so in the data segment
  std::vector<float> c(kN);
  for (int64_t i = 0; i < kN; ++i) c[static_cast<size_t>(i)] = static_cast<float>(i);
  Graph g("add_c");
  ValueId x = g.add_input("x", f32({kN}));
  ValueId k = g.add_constant(
      Constant::copy_of(f32({kN}), {reinterpret_cast<const uint8_t*>(c.data()), c.size() * sizeof(float)}));
  g.set_outputs({{"y", g.add_op("add", {x, k})[0]}});
  const std::string path = ::testing::TempDir() + "max_c_shrinking_" + std::to_string(::getpid()) + ".maxg";
  save(g, path);
  auto model = Model::create(CompiledModel::compile(Context::create({}), load(path), {}), NamedTensors{});
  Ref<Tensor> in = Tensor::create(Device::cpu(), DType::kFloat32, {kN});
  const std::vector<Ref<Tensor>> inputs{in};
  auto out = model->execute(inputs);
  EXPECT_EQ(reinterpret_cast<const float*>(out[0]->data())[kN - 1], static_cast<float>(kN - 1));
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  EXPECT_MAXC_ERROR(model->execute(inputs), Code::kDataLoss, path.c_str(), "shorter than when it was mapped");
  // The pages read as zeros since; every later execute still says so.
  EXPECT_MAXC_ERROR(model->execute(inputs), Code::kDataLoss, "constant 0", path.c_str());
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace maxc
