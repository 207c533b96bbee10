// The regression replay: a main for any fuzz target, built with the ordinary toolchain (gcc,
// no libFuzzer), that runs LLVMFuzzerTestOneInput on every file under the folders it is given
// (corpus/<target> and regressions/<target>). ctest runs it in every build, so each input that
// ever crashed stays fixed in ctest_dev and under ASan + UBSan in ctest_asan.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// The structure-aware targets call libFuzzer's byte mutator from their custom mutator, which
// a replay never runs: this stands in for it at link time.
extern "C" size_t LLVMFuzzerMutate(uint8_t*, size_t size, size_t) { return size; }

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (!fs::is_directory(argv[i])) continue;  // a target with no regressions yet
    for (const auto& entry : fs::recursive_directory_iterator(argv[i]))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no input files under the folders given\n");
    return 1;
  }
  for (const fs::path& path : files) {
    std::fprintf(stderr, "%s\n", path.c_str());  // the last line names the input of a crash
    std::ifstream in(path, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::fprintf(stderr, "%zu inputs replayed\n", files.size());
  return 0;
}
