// Batch loops (engine/batch_loop.h): a stretch of convolutions whose tensors outgrow the
// cache runs a slice of the batch at a time, and every image comes out as it does alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "engine/batch_loop.h"
#include "engine_test_util.h"

namespace maxc {
namespace {

using engine_test::f32;
using engine_test::random_tensor;

constexpr int64_t kSize = 64, kIn = 16, kWide = 128;  // [n, 64, 64, 128] float32: 2 MiB an image

// s = softmax(x); a = relu(conv1x1(s) + b1); e = relu(conv1x1(a) + b2 + a) + bias;
// z = mean_H(max_pool(e)). At batch 4 `a` and `e` are 8 MiB: the loop runs from the first conv
// to `e`; the softmax (not cut: one of the ops the loops leave alone) comes before it, the pool
// (its output is 2 MiB) and the mean after it. `s` is read on every pass, `a` lives only in
// the loop, `e` leaves it.
Graph residual_block(bool e_is_output) {
  Graph g("residual_block");
  ValueId x = g.add_op("softmax", {g.add_input("x", f32({"n", kSize, kSize, kIn}))})[0];
  const Attrs conv{{"input_layout", std::string("NHWC")}, {"filter_layout", std::string("RSCF")}};
  ValueId a = g.add_op("conv2d", {x, g.add_weight("f1", f32({1, 1, kIn, kWide})), g.add_weight("b1", f32({kWide}))},
                       conv)[0];
  a = g.add_op("relu", {a})[0];
  ValueId c = g.add_op("conv2d", {a, g.add_weight("f2", f32({1, 1, kWide, kWide})), g.add_weight("b2", f32({kWide}))},
                       conv)[0];
  ValueId e = g.add_op("relu", {g.add_op("add", {c, a})[0]})[0];
  e = g.add_op("add", {e, g.add_weight("bias", f32({1, 1, 1, kWide}))})[0];  // a broadcast operand
  const Attrs pool{{"kernel_size", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}}};
  ValueId z = g.add_op("mean", {g.add_op("max_pool2d", {e}, pool)[0]}, Attrs{{"axis", int64_t{1}}})[0];
  if (e_is_output) {
    g.set_outputs({{"e", e}, {"z", z}});
  } else {
    g.set_outputs({{"z", z}});
  }
  return g;
}

NamedTensors weights() {
  return {{"f1", random_tensor({1, 1, kIn, kWide}, 1)},
          {"b1", random_tensor({kWide}, 2)},
          {"f2", random_tensor({1, 1, kWide, kWide}, 3, -0.2f, 0.2f)},
          {"b2", random_tensor({kWide}, 4)},
          {"bias", random_tensor({1, 1, 1, kWide}, 5)}};
}

// Image i of a batch tensor, as a batch of one.
Ref<Tensor> image(const Ref<Tensor>& t, int64_t i) {
  std::vector<int64_t> dims = t->dims();
  const uint64_t bytes = t->byte_size() / static_cast<uint64_t>(dims[0]);
  dims[0] = 1;
  auto one = Tensor::create(Device::cpu(), t->dtype(), dims);
  std::memcpy(one->data(), static_cast<const uint8_t*>(t->data()) + static_cast<uint64_t>(i) * bytes, bytes);
  return one;
}

void expect_same(const Ref<Tensor>& got, const Ref<Tensor>& want, const std::string& what) {
  ASSERT_EQ(got->num_elements(), want->num_elements()) << what;
  const auto* g = reinterpret_cast<const float*>(got->data());
  const auto* w = reinterpret_cast<const float*>(want->data());
  for (int64_t i = 0; i < got->num_elements(); ++i)
    ASSERT_NEAR(g[i], w[i], 1e-4f * std::max(1.f, std::fabs(w[i]))) << what << " at " << i;
}

struct Want {
  int64_t batch;
  size_t loops;    // 0 or 1
  int64_t passes;  // when looped
};

TEST(BatchLoop, ImagesComeOutAsTheyDoAlone) {
  for (bool e_is_output : {true, false}) {
    auto cm = CompiledModel::compile(Context::create({}), residual_block(e_is_output), {});
    auto model = Model::create(cm, weights());
    // Items per slice: as many as keep a slice's [*, 64, 64, 128] at 4 MiB, dividing the batch.
    for (const Want& want : {Want{2, 0, 0}, Want{4, 1, 2}, Want{5, 1, 5}, Want{6, 1, 3}}) {
      const std::string what = testing::PrintToString(want.batch) + (e_is_output ? " e out" : " z only");
      auto plan = cm->plan_for({{"n", want.batch}});
      ASSERT_EQ(plan->loops.size(), want.loops) << what;
      if (want.loops) {
        const StepLoop& loop = plan->loops[0];
        EXPECT_EQ(loop.passes, want.passes) << what;
        EXPECT_EQ(loop.first, 1u) << what;
        EXPECT_GE(loop.end, 2u) << what;
        for (size_t k = loop.first; k < loop.end; ++k) EXPECT_NE(plan->steps[k].op, "mean") << what;
      }
      Ref<Tensor> x = random_tensor({want.batch, kSize, kSize, kIn}, 10 + static_cast<uint32_t>(want.batch));
      const auto got = model->execute(std::vector<Ref<Tensor>>{x});
      for (int64_t i = 0; i < want.batch; ++i) {
        const auto alone = model->execute(std::vector<Ref<Tensor>>{image(x, i)});
        for (size_t j = 0; j < got.size(); ++j)
          expect_same(image(got[j], i), alone[j],
                      what + " output " + std::to_string(j) + " image " + std::to_string(i));
      }
    }
  }
}

// Nodes that mix the batch's items, or read an operand the loop makes whole, end the stretch.
TEST(BatchLoop, OnlyNodesThatKeepItemsApartAreCut) {
  std::vector<Shape> shapes = {{DType::kFloat32, {4, 8, 8, 3}}, {DType::kFloat32, {4, 8, 8, 3}},
                               {DType::kFloat32, {1, 1, 1, 3}}, {DType::kFloat32, {8, 8, 3}},
                               {DType::kFloat32, {3, 8, 8, 4}}, {DType::kFloat32, {4, 3, 8, 8}}};
  Node add{"add", {0, 2}, {1}, {}, {}, {}};
  EXPECT_EQ(batch_cut_inputs(add, shapes, 4), (std::vector<bool>{true, false}));
  Node add3{"add", {0, 3}, {1}, {}, {}, {}};
  EXPECT_EQ(batch_cut_inputs(add3, shapes, 4), (std::vector<bool>{true, false}));
  EXPECT_TRUE(batch_cut_inputs(add, shapes, 1).empty()) << "a batch of one is no loop";
  Node mixed{"add", {0, 4}, {1}, {}, {}, {}};  // dim 0 of 3 against the batch's 4: not elementwise per item
  EXPECT_TRUE(batch_cut_inputs(mixed, shapes, 4).empty());
  Node keep{"permute", {5}, {1}, Attrs{{"dims", std::vector<int64_t>{0, 2, 3, 1}}}, {}, {}};
  EXPECT_EQ(batch_cut_inputs(keep, shapes, 4), (std::vector<bool>{true}));
  Node move{"permute", {5}, {1}, Attrs{{"dims", std::vector<int64_t>{1, 0, 2, 3}}}, {}, {}};
  EXPECT_TRUE(batch_cut_inputs(move, shapes, 4).empty());
  Node sum{"sum", {0}, {1}, Attrs{{"axis", int64_t{0}}}, {}, {}};
  EXPECT_TRUE(batch_cut_inputs(sum, shapes, 4).empty());
}

// A file's static batch of 2^40 once made the slice search count to 2^40 at compile. The
// search is bounded by the slice size now: a batch with no small divisor (a prime) is its
// worst case, and still quick.
TEST(BatchLoop, HugeBatchesPlanQuickly) {
  struct Case {
    int64_t batch, slice;
  };
  for (const Case& c : {Case{int64_t{1} << 40, int64_t{1} << 18}, Case{1099511627689, 1}}) {
    Program p;
    p.nodes = {Node{"relu", {0}, {1}, {}, {}, {}}, Node{"relu", {1}, {2}, {}, {}, {}}};
    // 16 bytes an item: a 4 MiB slice holds 2^18 of them.
    const std::vector<Shape> shapes(3, Shape{DType::kFloat32, {c.batch, 4}});
    const auto start = std::chrono::steady_clock::now();
    const std::vector<BatchLoop> loops = find_batch_loops(p, shapes);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_EQ(loops.size(), 1u) << c.batch;
    EXPECT_EQ(loops[0].batch, c.batch);
    EXPECT_EQ(loops[0].slice, c.slice) << c.batch;
    EXPECT_LT(seconds, 2.0) << c.batch;
  }
}

}  // namespace
}  // namespace maxc
