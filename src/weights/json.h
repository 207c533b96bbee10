// A small strict JSON reader (RFC 8259) for the headers and index files of weights formats,
// and the two writing helpers those formats' writers need.
//
// Strict: no comments, no trailing commas, no leading zeros, no NaN/Infinity, no control
// characters or invalid UTF-8 inside strings, lone surrogates refused, duplicate object keys
// refused, nothing but whitespace after the value. Numbers without a fraction or exponent
// that fit int64 are kept exact; every other number is a double. Nesting is limited, so a
// hostile document cannot exhaust the stack.
//
// Two ways in: JsonReader pulls one token at a time, so a format reader keeps only what it
// needs and can refuse an oversized array at its first surplus element (memory stays
// proportional to what is kept, not to the document); parse_json builds a whole tree (memory
// a small multiple of the text) for documents of free form, such as index files.
//
// Errors: DATA_LOSS "<source>: invalid JSON at offset N: <what>", where N is the byte offset
// in the file (base_offset + position in the text).
//
// Thread-safety: a reader belongs to one thread; trees are immutable values.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace maxc {

class JsonReader {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  struct Number {
    bool is_int;  // integral and within int64: `i` holds it exactly
    int64_t i;
    double d;
  };

  JsonReader(std::string_view text, std::string_view source, uint64_t base_offset = 0, int max_depth = 64);

  // The kind of the next value (whitespace skipped); DATA_LOSS when no value starts there.
  Kind peek();
  // File offset of the next unread character (of the next value, after peek()).
  uint64_t offset() const { return base_ + pos_; }

  // Each reads the next value, which must be of its kind.
  void read_null();
  bool read_bool();
  Number read_number();
  std::string read_string();
  void skip_value();

  // Containers. begin_* consumes the opening bracket. Then, repeatedly, next_item() /
  // next_key() either returns true with exactly one value (after its key) to be read next,
  // or consumes the closing bracket and returns false.
  void begin_array();
  bool next_item();
  void begin_object();
  bool next_key(std::string& key);

  // Only whitespace may remain.
  void end();

  [[noreturn]] void fail_at(uint64_t offset, std::string_view what) const;

 private:
  struct Frame {
    bool first = true;
    std::set<std::string> keys;  // objects only: duplicates are refused
  };

  [[noreturn]] void error(std::string_view what) const { error_pos(pos_, what); }
  [[noreturn]] void error_pos(size_t pos, std::string_view what) const;
  bool at_end() const { return pos_ >= text_.size(); }
  bool next_is(char c) const { return !at_end() && text_[pos_] == c; }
  void skip_space();
  void expect_char(char c, std::string_view what);
  void push_frame();
  bool next_in_container(char close);
  void literal(std::string_view word);
  uint32_t hex4();
  uint32_t unicode_escape();
  void escape(std::string& out);
  void skip_digits();

  std::string_view text_;
  std::string_view source_;
  uint64_t base_;
  int max_depth_;
  size_t pos_ = 0;
  std::vector<Frame> frames_;
};

class JsonValue {
 public:
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
  using Member = std::pair<std::string, JsonValue>;
  using Array = std::vector<JsonValue>;
  using Object = std::vector<Member>;  // in document order

  JsonValue() = default;
  template <typename T>
  JsonValue(T value, uint64_t offset) : value_(std::move(value)), offset_(offset) {}

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  // Byte offset of the value's first character, in the same frame as error messages.
  uint64_t offset() const { return offset_; }

  bool is_null() const { return kind() == Kind::kNull; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_number() const { return is_int() || kind() == Kind::kDouble; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_array() const { return kind() == Kind::kArray; }
  bool is_object() const { return kind() == Kind::kObject; }

  // Each accessor requires the matching kind (std::bad_variant_access otherwise).
  bool as_bool() const { return std::get<bool>(value_); }
  int64_t as_int() const { return std::get<int64_t>(value_); }
  double as_double() const { return is_int() ? static_cast<double>(as_int()) : std::get<double>(value_); }
  const std::string& as_string() const { return std::get<std::string>(value_); }
  const Array& as_array() const { return std::get<Array>(value_); }
  const Object& as_object() const { return std::get<Object>(value_); }

  // The member named `key` of an object; nullptr when absent or when this is not an object.
  const JsonValue* find(std::string_view key) const;

 private:
  std::variant<std::monostate, bool, int64_t, double, std::string, Array, Object> value_;
  uint64_t offset_ = 0;
};

// Parses one JSON document into a tree. `source` names it in error messages (a file path);
// offsets in values and messages are `base_offset` + the position in `text`.
JsonValue parse_json(std::string_view text, std::string_view source, uint64_t base_offset = 0,
                     int max_depth = 64);

// `s` as a JSON string literal, quotes included. `s` is taken as UTF-8 and copied as is
// except for the characters JSON requires to be escaped.
std::string json_quote(std::string_view s);

// Compact JSON text of a value (for re-emitting a value whose meaning we do not interpret).
std::string to_json(const JsonValue& value);

}  // namespace maxc
