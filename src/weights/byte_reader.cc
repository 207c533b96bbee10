#include "weights/byte_reader.h"

#include "base/error.h"

namespace maxc {

void ByteReader::fail_at(uint64_t offset, std::string_view what) const {
  if (context_.empty()) fail(Code::kDataLoss, file_.path(), ": ", what, " (at offset ", offset, ")");
  fail(Code::kDataLoss, file_.path(), ": ", context_, ": ", what, " (at offset ", offset, ")");
}

void ByteReader::fail_truncated(uint64_t n, const char* what) const {
  fail_at(offset_, str_cat("truncated: ", what, " needs ", n, " bytes, ", remaining(), " left"));
}

}  // namespace maxc
