// A reader of the protobuf wire format, just enough for ONNX files: we decode the handful of
// messages the importer needs ourselves instead of linking libprotobuf and generated code.
//
// A reader is a cursor over one message's bytes. Every length is checked against the bytes
// that remain before anything is read or allocated, and nested messages are opened through
// sub-readers that carry a depth, so a hostile file gets DATA_LOSS (truncated or corrupt,
// with the byte offset from the start of the file) or INVALID_ARGUMENT (too deep), never a
// crash or an unbounded allocation.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace maxc::onnx {

enum class WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Nesting deeper than any ONNX model needs (a graph in an attribute in a node in a graph...).
constexpr int kMaxDepth = 64;

class ProtoReader {
 public:
  // `base` is the file offset of bytes[0], used only in messages.
  explicit ProtoReader(std::span<const uint8_t> bytes, uint64_t base = 0, int depth = 0);

  bool done() const { return pos_ >= bytes_.size(); }
  uint64_t offset() const { return base_ + pos_; }  // in the file

  // Reads the next field's tag. Field 0, an unknown wire type or a group are DATA_LOSS.
  void next_tag(uint32_t* field, WireType* type);

  uint64_t read_varint();
  uint32_t read_fixed32();
  uint64_t read_fixed64();
  int64_t read_int64() { return static_cast<int64_t>(read_varint()); }
  // A varint that must fit int32 (proto int32/enum values are sign-extended to 64 bits).
  int32_t read_int32();
  float read_float();
  double read_double();
  // The payload of a length-delimited field, still inside the file's bytes.
  std::span<const uint8_t> read_bytes();
  std::string read_string();
  // A reader over a nested message (one level deeper); INVALID_ARGUMENT past kMaxDepth.
  ProtoReader read_message();

  // Skips the value of a field of wire type `type` that the caller does not decode.
  void skip(WireType type);

  // Repeated scalars arrive packed (one length-delimited run) or one per tag; these accept
  // both, given the wire type the tag had, and append to `out`.
  void read_repeated_int64(WireType type, std::vector<int64_t>* out);
  void read_repeated_uint64(WireType type, std::vector<uint64_t>* out);
  void read_repeated_int32(WireType type, std::vector<int32_t>* out);
  void read_repeated_float(WireType type, std::vector<float>* out);
  void read_repeated_double(WireType type, std::vector<double>* out);

  // DATA_LOSS "<what> at byte <offset>" unless the field had the wire type `want`.
  void expect(WireType got, WireType want, std::string_view what) const;

 private:
  [[noreturn]] void fail_at(uint64_t offset, std::string_view what) const;
  void need(uint64_t n, std::string_view what) const;
  template <typename T, typename ReadOne>
  void read_repeated(WireType type, WireType scalar, std::vector<T>* out, ReadOne read_one);

  std::span<const uint8_t> bytes_;
  uint64_t base_;
  int depth_;
  size_t pos_ = 0;
};

// Calls fn(field, wire_type) for each field of the message in turn; fn reads the value or
// skips it (ProtoReader::skip). The one loop every message decoder shares.
template <typename Fn>
void for_each_field(ProtoReader& r, Fn&& fn) {
  uint32_t field;
  WireType type;
  while (!r.done()) {
    r.next_tag(&field, &type);
    fn(field, type);
  }
}

}  // namespace maxc::onnx
