#include "onnx/external_data.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/error.h"

namespace maxc::onnx {
namespace {

namespace fs = std::filesystem;

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

// The file `rel` names under `base_dir`, refusing anything that resolves outside it.
fs::path resolve_inside(const std::string& base_dir, const std::string& rel, const std::string& what) {
  fs::path p(rel);
  if (p.is_absolute() || p.has_root_name() || p.has_root_directory())
    fail(Code::kInvalidArgument, "onnx: ", what, ": external data location \"", rel,
         "\" is absolute; it must be relative to the model's directory");
  for (const auto& part : p)
    if (part == "..")
      fail(Code::kInvalidArgument, "onnx: ", what, ": external data location \"", rel,
           "\" leaves the model's directory");
  std::error_code ec;
  fs::path base = fs::weakly_canonical(fs::path(base_dir), ec);
  if (ec) fail(Code::kNotFound, "onnx: ", what, ": model directory \"", base_dir, "\": ", ec.message());
  fs::path full = fs::weakly_canonical(base / p, ec);
  if (ec) fail(Code::kNotFound, "onnx: ", what, ": external data file \"", rel, "\": ", ec.message());
  auto [b, f] = std::mismatch(base.begin(), base.end(), full.begin(), full.end());
  if (b != base.end())
    fail(Code::kInvalidArgument, "onnx: ", what, ": external data location \"", rel,
         "\" resolves outside the model's directory (to ", full.string(), ")");
  return full;
}

}  // namespace

ExternalRange locate_external_data(const TensorProto& tp, uint64_t expected_bytes, const std::string& what,
                                   const std::string& base_dir) {
  if (base_dir.empty())
    fail(Code::kInvalidArgument, "onnx: ", what,
         " keeps its data in an external file, but the model was given as bytes without a directory");
  Location loc = parse_location(tp, what);
  fs::path path = resolve_inside(base_dir, loc.path, what);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    fail(Code::kNotFound, "onnx: ", what, ": external data file \"", loc.path, "\" does not exist or is not a file");
  uint64_t size = fs::file_size(path, ec);
  if (ec) fail(Code::kUnavailable, "onnx: ", what, ": cannot stat \"", loc.path, "\": ", ec.message());
  if (loc.length && *loc.length != expected_bytes)
    fail(Code::kDataLoss, "onnx: ", what, ": external data length ", *loc.length, " but its dims and type need ",
         expected_bytes, " bytes");
  if (loc.offset > size || expected_bytes > size - loc.offset)
    fail(Code::kDataLoss, "onnx: ", what, ": external data range [", loc.offset, ", +", expected_bytes,
         ") lies past the end of \"", loc.path, "\" (", size, " bytes)");
  return ExternalRange{path.string(), loc.offset, expected_bytes};
}

void read_external_data(const ExternalRange& range, uint8_t* dst, const std::string& what) {
  std::ifstream in(range.path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(range.offset));
  in.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(range.bytes));
  if (!in && range.bytes > 0)
    fail(Code::kDataLoss, "onnx: ", what, ": could not read ", range.bytes, " bytes at offset ", range.offset,
         " of \"", range.path, "\"");
}

}  // namespace maxc::onnx
