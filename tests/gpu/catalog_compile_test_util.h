// What the NVRTC and hipRTC suites (tests/nvrtc, tests/hiprtc) check alike of every kernel
// source: a parameter per (source, architecture), the catalog's instances of a source, and
// that each requested instance came back as a symbol of its own.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "driver/cuda/kernel_compiler.h"
#include "kernels/cuda/kernel_catalog.h"

namespace maxc::testing {

using SourceAndArchitecture = std::tuple<std::string, std::string>;

// "softmax_cu_sm_90": a test name from a (source, architecture) parameter.
inline std::string source_and_architecture_name(const ::testing::TestParamInfo<SourceAndArchitecture>& info) {
  std::string name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

inline std::vector<std::string> catalog_instances(const std::string& source) {
  for (const gpu::KernelFamily& f : gpu::kernel_catalog())
    if (f.source == source) return f.instances;
  return {};
}

// Every instance asked for has a mangled symbol, and no two share one.
inline void expect_one_symbol_per_instance(const cuda::CompiledKernels& k, const std::vector<std::string>& instances) {
  ASSERT_EQ(k.lowered_names.size(), instances.size());
  std::set<std::string> symbols;
  for (const auto& [expression, symbol] : k.lowered_names) {
    EXPECT_EQ(symbol.rfind("_Z", 0), 0u) << expression << " -> " << symbol;
    symbols.insert(symbol);
  }
  EXPECT_EQ(symbols.size(), instances.size()) << "two instances share a symbol";
}

}  // namespace maxc::testing
