#include "onnx/proto_reader.h"

#include <cstring>

#include "base/error.h"

namespace maxc::onnx {

ProtoReader::ProtoReader(std::span<const uint8_t> bytes, uint64_t base, int depth)
    : bytes_(bytes), base_(base), depth_(depth) {}

void ProtoReader::fail_at(uint64_t offset, std::string_view what) const {
  fail(Code::kDataLoss, "onnx: corrupt or truncated protobuf: ", what, " at byte ", offset);
}

void ProtoReader::need(uint64_t n, std::string_view what) const {
  if (n > bytes_.size() - pos_)
    fail_at(offset(), std::string(what) + " needs " + std::to_string(n) + " bytes but only " +
                          std::to_string(bytes_.size() - pos_) + " remain");
}

uint64_t ProtoReader::read_varint() {
  uint64_t start = offset(), value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos_ >= bytes_.size()) fail_at(start, "a varint runs past the end");
    uint8_t b = bytes_[pos_++];
    if (shift == 63 && (b & 0x7e)) fail_at(start, "a varint overflows 64 bits");
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return value;
  }
  fail_at(start, "a varint is longer than 10 bytes");
}

int32_t ProtoReader::read_int32() {
  uint64_t start = offset();
  int64_t v = static_cast<int64_t>(read_varint());
  if (v < INT32_MIN || v > INT32_MAX) fail_at(start, "an int32 field holds " + std::to_string(v));
  return static_cast<int32_t>(v);
}

uint32_t ProtoReader::read_fixed32() {
  need(4, "a fixed32");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(bytes_[pos_ + i]) << (8 * i);
  pos_ += 4;
  return v;
}

uint64_t ProtoReader::read_fixed64() {
  need(8, "a fixed64");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(bytes_[pos_ + i]) << (8 * i);
  pos_ += 8;
  return v;
}

float ProtoReader::read_float() {
  uint32_t bits = read_fixed32();
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double ProtoReader::read_double() {
  uint64_t bits = read_fixed64();
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

std::span<const uint8_t> ProtoReader::read_bytes() {
  uint64_t n = read_varint();
  need(n, "a length-delimited field");
  auto out = bytes_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return out;
}

std::string ProtoReader::read_string() {
  auto b = read_bytes();
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

ProtoReader ProtoReader::read_message() {
  if (depth_ + 1 > kMaxDepth)
    fail(Code::kInvalidArgument, "onnx: messages nest deeper than ", kMaxDepth, " levels at byte ", offset());
  uint64_t start = offset();
  auto b = read_bytes();
  return ProtoReader(b, start + (offset() - start - b.size()), depth_ + 1);
}

void ProtoReader::next_tag(uint32_t* field, WireType* type) {
  uint64_t start = offset();
  uint64_t tag = read_varint();
  uint64_t number = tag >> 3;
  uint32_t wire = static_cast<uint32_t>(tag & 7);
  if (number == 0 || number > 0x1fffffff) fail_at(start, "a tag has the invalid field number " + std::to_string(number));
  if (wire != 0 && wire != 1 && wire != 2 && wire != 5)
    fail_at(start, "field " + std::to_string(number) + " has the unsupported wire type " + std::to_string(wire));
  *field = static_cast<uint32_t>(number);
  *type = static_cast<WireType>(wire);
}

void ProtoReader::skip(WireType type) {
  switch (type) {
    case WireType::kVarint: read_varint(); return;
    case WireType::kFixed64: need(8, "a fixed64"); pos_ += 8; return;
    case WireType::kFixed32: need(4, "a fixed32"); pos_ += 4; return;
    case WireType::kLengthDelimited: read_bytes(); return;
  }
  fail_at(offset(), "an unknown wire type");
}

void ProtoReader::expect(WireType got, WireType want, std::string_view what) const {
  if (got != want)
    fail_at(offset(), std::string(what) + " has wire type " + std::to_string(static_cast<uint32_t>(got)) +
                          ", expected " + std::to_string(static_cast<uint32_t>(want)));
}

template <typename T, typename ReadOne>
void ProtoReader::read_repeated(WireType type, WireType scalar, std::vector<T>* out, ReadOne read_one) {
  if (type == scalar) {
    out->push_back(read_one(*this));
    return;
  }
  expect(type, WireType::kLengthDelimited, "a repeated scalar field");
  uint64_t start = offset();
  auto payload = read_bytes();
  ProtoReader packed(payload, start + (offset() - start - payload.size()), depth_);
  // Each element takes at least one byte (fixed ones exactly their width): the reserve is
  // bounded by the payload, which is bounded by the file.
  size_t width = scalar == WireType::kFixed32 ? 4 : scalar == WireType::kFixed64 ? 8 : 1;
  if (width > 1 && payload.size() % width != 0)
    fail_at(start, "a packed field of " + std::to_string(width) + "-byte values has " +
                       std::to_string(payload.size()) + " bytes");
  out->reserve(out->size() + payload.size() / width);
  while (!packed.done()) out->push_back(read_one(packed));
}

void ProtoReader::read_repeated_int64(WireType type, std::vector<int64_t>* out) {
  read_repeated(type, WireType::kVarint, out, [](ProtoReader& r) { return r.read_int64(); });
}
void ProtoReader::read_repeated_uint64(WireType type, std::vector<uint64_t>* out) {
  read_repeated(type, WireType::kVarint, out, [](ProtoReader& r) { return r.read_varint(); });
}
void ProtoReader::read_repeated_int32(WireType type, std::vector<int32_t>* out) {
  // int32_data also carries uint16 bit patterns (float16) and sign-extended negatives.
  read_repeated(type, WireType::kVarint, out, [](ProtoReader& r) { return r.read_int32(); });
}
void ProtoReader::read_repeated_float(WireType type, std::vector<float>* out) {
  read_repeated(type, WireType::kFixed32, out, [](ProtoReader& r) { return r.read_float(); });
}
void ProtoReader::read_repeated_double(WireType type, std::vector<double>* out) {
  read_repeated(type, WireType::kFixed64, out, [](ProtoReader& r) { return r.read_double(); });
}

}  // namespace maxc::onnx
