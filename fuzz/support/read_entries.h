// What the weights-file targets do with each entry a parser accepts: view it as a tensor and
// read every byte, so an entry that points outside the file is an ASan report, not a quiet pass.
#pragma once

#include <cstdint>
#include <vector>

#include "weights/mapped_file.h"
#include "weights/weight_entry.h"

namespace maxfuzz {

inline void read_entries(const std::vector<maxc::WeightEntry>& entries) {
  volatile uint8_t sum = 0;
  for (const maxc::WeightEntry& e : entries) {
    auto tensor = maxc::mapped_tensor(e.file, e.file->data() + e.offset, e.info.dtype, e.info.dims);
    for (uint64_t i = 0; i < e.bytes; ++i) sum = sum + e.file->data()[e.offset + i];
  }
}

}  // namespace maxfuzz
