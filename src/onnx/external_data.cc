#include "onnx/external_data.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "base/error.h"

namespace maxc::onnx {
namespace {

struct Location {
  std::string path;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

uint64_t parse_u64(const std::string& text, const std::string& key, const std::string& what) {
  if (text.empty() || text.size() > 20 || text.find_first_not_of("0123456789") != std::string::npos)
    fail(Code::kInvalidArgument, "onnx: ", what, ": external data '", key, "' is \"", text,
         "\"; expected a non-negative integer");
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) fail(Code::kInvalidArgument, "onnx: ", what, ": external data '", key, "' overflows 64 bits");
  return v;
}

Location parse_location(const TensorProto& tp, const std::string& what) {
  Location loc;
  for (const auto& [key, value] : tp.external_data) {
    if (key == "location") loc.path = value;
    else if (key == "offset") loc.offset = parse_u64(value, key, what);
    else if (key == "length") loc.length = parse_u64(value, key, what);
  }
  if (loc.path.empty()) fail(Code::kInvalidArgument, "onnx: ", what, ": external data has no 'location'");
  return loc;
}

}  // namespace

ExternalRange locate_external_data(const TensorProto& tp, uint64_t expected_bytes, const std::string& what,
                                   const std::string& base_dir) {
  if (base_dir.empty())
    fail(Code::kInvalidArgument, "onnx: ", what,
         " keeps its data in an external file, but the model was given as bytes without a directory");
  Location loc = parse_location(tp, what);
  auto file = std::make_shared<const FileInside>(
      open_file_inside(base_dir, loc.path, str_cat("onnx: ", what, ": external data location"), "the model's directory"));
  const uint64_t size = file->size;
  if (loc.length && *loc.length != expected_bytes)
    fail(Code::kDataLoss, "onnx: ", what, ": external data length ", *loc.length, " but its dims and type need ",
         expected_bytes, " bytes");
  if (loc.offset > size || expected_bytes > size - loc.offset)
    fail(Code::kDataLoss, "onnx: ", what, ": external data range [", loc.offset, ", +", expected_bytes,
         ") lies past the end of \"", loc.path, "\" (", size, " bytes)");
  return ExternalRange{std::move(file), loc.offset, expected_bytes};
}

void read_external_data(const ExternalRange& range, uint8_t* dst, const std::string& what) {
  read_file_range(*range.file, range.offset, range.bytes, dst, str_cat("onnx: ", what));
}

}  // namespace maxc::onnx
