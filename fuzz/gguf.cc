// GGUF files (src/weights/gguf.cc): the header, metadata values (nested arrays), tensor infos,
// alignment and offsets, the quantized row layouts; each tensor that parses is then viewed
// and read in full, so an entry that points outside the file is an ASan report.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/guard.h"
#include "weights/gguf.h"
#include "weights/mapped_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  maxfuzz::guarded([&] {
    auto file = maxc::MappedFile::from_bytes("fuzz.gguf", std::vector<uint8_t>(data, data + size));
    const maxc::GgufFile parsed = maxc::read_gguf(file);
    volatile uint8_t sum = 0;
    for (const maxc::WeightEntry& e : parsed.entries) {
      auto tensor = maxc::mapped_tensor(e.file, e.file->data() + e.offset, e.info.dtype, e.info.dims);
      for (uint64_t i = 0; i < e.bytes; ++i) sum = sum + e.file->data()[e.offset + i];
    }
  });
  return 0;
}
