// Checks of the structure-aware ONNX mutator, run by ctest (fuzz_mutator): the tree encodes
// every seed back to its exact bytes, and mutations keep the model decodable protobuf most of
// the time (else the fuzzer would be a byte fuzzer in disguise) while changing it.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "support/onnx_mutator.h"
#include "support/onnx_schema.h"

namespace {

int failures = 0;

void check(bool ok, const char* what, const std::filesystem::path& file) {
  if (ok) return;
  std::fprintf(stderr, "FAILED: %s: %s\n", file.c_str(), what);
  ++failures;
}

// A byte mutator that breaks its input, so the count of decodable results measures the
// mutator's own edits.
size_t break_bytes(uint8_t* data, size_t size, size_t max_size) {
  if (size) data[0] ^= 0xff;
  return size;
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 2) return 2;
  size_t seeds = 0;
  for (const auto& entry : fs::directory_iterator(argv[1])) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto tree = maxfuzz::parse_message(bytes.data(), bytes.size(), maxfuzz::onnx_model_schema());
    check(tree.has_value(), "the seed does not decode", entry.path());
    if (!tree) continue;
    const std::string again = maxfuzz::encode_message(*tree);
    check(again.size() == bytes.size() && std::memcmp(again.data(), bytes.data(), bytes.size()) == 0,
          "the seed does not encode back to its bytes", entry.path());
    int decodable = 0, changed = 0;
    for (unsigned seed = 0; seed < 200; ++seed) {
      std::vector<uint8_t> buf(bytes);
      buf.resize(bytes.size() * 2 + 4096);
      const size_t n = maxfuzz::mutate_onnx(buf.data(), bytes.size(), buf.size(), seed, break_bytes);
      decodable += maxfuzz::parse_message(buf.data(), n, maxfuzz::onnx_model_schema()).has_value();
      changed += n != bytes.size() || std::memcmp(buf.data(), bytes.data(), n) != 0;
    }
    check(decodable >= 150, "fewer than 150 of 200 mutations decode", entry.path());
    check(changed >= 180, "fewer than 180 of 200 mutations change the model", entry.path());
    ++seeds;
  }
  std::fprintf(stderr, "%zu seeds checked\n", seeds);
  return failures == 0 && seeds > 0 ? 0 : 1;
}
