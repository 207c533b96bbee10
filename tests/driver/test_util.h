// Helpers shared by the driver tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "driver/tensor.h"

namespace maxc::testing {

// Runs `statement`, expects a maxc::Error with `code` whose message contains every piece.
#define EXPECT_MAXC_ERROR(statement, expected_code, ...)                                  \
  do {                                                                                   \
    bool thrown_ = false;                                                                \
    try {                                                                                \
      statement;                                                                         \
    } catch (const ::maxc::Error& e_) {                                                  \
      thrown_ = true;                                                                    \
      EXPECT_EQ(e_.code(), expected_code) << "message: " << e_.what();                   \
      for (const char* piece_ : {__VA_ARGS__})                                           \
        EXPECT_TRUE(std::string(e_.what()).find(piece_) != std::string::npos)            \
            << "message \"" << e_.what() << "\" lacks \"" << piece_ << "\"";             \
    }                                                                                    \
    EXPECT_TRUE(thrown_) << #statement " did not throw";                                 \
  } while (0)

// A host tensor of int32 holding 0, 1, 2, ... in row-major order.
inline Ref<Tensor> iota_i32(std::vector<int64_t> dims) {
  auto t = Tensor::create(Device::cpu(), DType::kInt32, std::move(dims));
  auto* p = reinterpret_cast<int32_t*>(t->data());
  for (int64_t i = 0; i < t->num_elements(); ++i) p[i] = static_cast<int32_t>(i);
  return t;
}

inline std::vector<int32_t> host_i32(const Tensor& t) {
  std::vector<int32_t> out(static_cast<size_t>(t.num_elements()));
  t.to_host(out.data(), out.size() * sizeof(int32_t));
  return out;
}

}  // namespace maxc::testing
