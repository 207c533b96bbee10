// A protobuf message as an editable tree, for the structure-aware ONNX mutator: decoded with
// a schema that says which length-delimited fields are messages and which are packed
// scalars, changed in place, and encoded again. Independent of the library's own reader
// (src/onnx/proto_reader.h) on purpose: the fuzzer must not share the code it tests.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace maxfuzz {

struct MessageSchema;

// How a length-delimited field is read.
enum class Payload : uint8_t { kBytes, kMessage, kPackedVarint, kPackedFixed32, kPackedFixed64 };

struct FieldSchema {
  uint32_t number;
  Payload payload;
  const MessageSchema* message = nullptr;  // for kMessage
  const char* role = "";                   // what the mutator may do with it ("dim", "name"...)
};

struct MessageSchema {
  const char* name;
  std::vector<FieldSchema> fields;
  const FieldSchema* find(uint32_t number) const;
};

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

struct Field {
  uint32_t number = 0;
  WireType wire = WireType::kVarint;
  const FieldSchema* schema = nullptr;  // null for a field the schema does not know
  uint64_t scalar = 0;                  // varint, fixed32, fixed64
  std::string bytes;                    // kBytes (and unknown length-delimited fields)
  std::vector<uint64_t> packed;         // packed scalars
  std::vector<Field> children;          // kMessage
  Payload payload() const { return schema ? schema->payload : Payload::kBytes; }
  bool is_message() const { return wire == WireType::kLengthDelimited && payload() == Payload::kMessage; }
};

// The fields of one message of type `schema`; nullopt when the bytes are no valid encoding.
std::optional<std::vector<Field>> parse_message(const uint8_t* data, size_t size, const MessageSchema& schema,
                                                int depth = 0);
std::string encode_message(const std::vector<Field>& fields);

}  // namespace maxfuzz
