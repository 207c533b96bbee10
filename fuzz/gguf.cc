// GGUF files (src/weights/gguf.cc): the header, metadata values (nested arrays), tensor infos,
// alignment and offsets, the quantized row layouts; each tensor that parses is then viewed
// and read in full, so an entry that points outside the file is an ASan report.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/guard.h"
#include "support/read_entries.h"
#include "weights/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  maxfuzz::guarded([&] {
    auto file = maxc::MappedFile::from_bytes("fuzz.gguf", std::vector<uint8_t>(data, data + size));
    const maxc::GgufFile parsed = maxc::read_gguf(file);
    maxfuzz::read_entries(parsed.entries);
  });
  return 0;
}
