// MAXG graph files (src/serialize): the header, the FlatBuffers Verifier, the rebuild through
// the op registry and the graph verifier; a graph that loads is written again, and what that
// writes must load again (the writer and the reader agree on every graph the reader accepts).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "serialize/reader.h"
#include "serialize/writer.h"
#include "support/guard.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> rewritten;
  maxfuzz::guarded([&] { rewritten = maxc::serialize(maxc::deserialize(std::span<const uint8_t>(data, size))); });
  if (!rewritten.empty()) maxc::deserialize(rewritten);  // throws (and so fails) if they disagree
  return 0;
}
