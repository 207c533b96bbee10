// safetensors files (src/weights/safetensors.cc): the header length, the JSON header and
// every tensor's offsets; each tensor that parses is then viewed and read in full, so an
// entry that points outside the file is an ASan report, not a quiet pass.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "support/guard.h"
#include "support/read_entries.h"
#include "weights/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  maxfuzz::guarded([&] {
    auto file = maxc::MappedFile::from_bytes("fuzz.safetensors", std::vector<uint8_t>(data, data + size));
    const maxc::SafetensorsFile parsed = maxc::read_safetensors(file);
    maxfuzz::read_entries(parsed.entries);
  });
  return 0;
}
