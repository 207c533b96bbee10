#include "weights/json.h"

#include <charconv>
#include <cmath>
#include <set>

#include "base/error.h"

namespace maxc {
namespace {

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Length of the well-formed UTF-8 sequence starting at s[0] (a byte >= 0x80), 0 if there is
// none. The ranges of the second byte exclude overlong forms, surrogates and > U+10FFFF.
size_t utf8_sequence_length(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto cont = [&](size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const auto in = [&](size_t i, unsigned lo, unsigned hi) { return i < s.size() && b(i) >= lo && b(i) <= hi; };
  const unsigned lead = b(0);
  if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
  if (lead == 0xE0) return in(1, 0xA0, 0xBF) && cont(2) ? 3 : 0;
  if (lead == 0xED) return in(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (lead >= 0xE1 && lead <= 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (lead == 0xF0) return in(1, 0x90, 0xBF) && cont(2) && cont(3) ? 4 : 0;
  if (lead >= 0xF1 && lead <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (lead == 0xF4) return in(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// The tree of the next value; recursion is bounded by the reader's depth limit.
JsonValue read_tree(JsonReader& r) {
  const JsonReader::Kind kind = r.peek();
  const uint64_t at = r.offset();
  switch (kind) {
    case JsonReader::Kind::kNull:
      r.read_null();
      return JsonValue(std::monostate{}, at);
    case JsonReader::Kind::kBool: return JsonValue(r.read_bool(), at);
    case JsonReader::Kind::kString: return JsonValue(r.read_string(), at);
    case JsonReader::Kind::kNumber: {
      const JsonReader::Number n = r.read_number();
      return n.is_int ? JsonValue(n.i, at) : JsonValue(n.d, at);
    }
    case JsonReader::Kind::kArray: {
      JsonValue::Array items;
      r.begin_array();
      while (r.next_item()) items.push_back(read_tree(r));
      return JsonValue(std::move(items), at);
    }
    case JsonReader::Kind::kObject: {
      JsonValue::Object members;
      r.begin_object();
      std::string key;
      while (r.next_key(key)) {
        JsonValue v = read_tree(r);
        members.emplace_back(std::move(key), std::move(v));
      }
      return JsonValue(std::move(members), at);
    }
  }
  r.fail_at(at, "invalid value");
}

void append_double(std::string& out, double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  out += s;
  // Keep it a double on the way back in: "1" would come back as an integer.
  if (s.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void append_json(std::string& out, const JsonValue& v) {
  switch (v.kind()) {
    case JsonValue::Kind::kNull: out += "null"; break;
    case JsonValue::Kind::kBool: out += v.as_bool() ? "true" : "false"; break;
    case JsonValue::Kind::kInt: out += std::to_string(v.as_int()); break;
    case JsonValue::Kind::kDouble: append_double(out, v.as_double()); break;
    case JsonValue::Kind::kString: out += json_quote(v.as_string()); break;
    case JsonValue::Kind::kArray: {
      out += '[';
      bool first = true;
      for (const JsonValue& item : v.as_array()) {
        if (!std::exchange(first, false)) out += ',';
        append_json(out, item);
      }
      out += ']';
      break;
    }
    case JsonValue::Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : v.as_object()) {
        if (!std::exchange(first, false)) out += ',';
        out += json_quote(key);
        out += ':';
        append_json(out, item);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace

const JsonValue* JsonValue::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [name, value] : as_object())
    if (name == key) return &value;
  return nullptr;
}

JsonValue parse_json(std::string_view text, std::string_view source, uint64_t base_offset, int max_depth) {
  JsonReader r(text, source, base_offset, max_depth);
  JsonValue v = read_tree(r);
  r.end();
  return v;
}

std::string json_quote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

std::string to_json(const JsonValue& value) {
  std::string out;
  append_json(out, value);
  return out;
}

JsonReader::JsonReader(std::string_view text, std::string_view source, uint64_t base_offset, int max_depth)
    : text_(text), source_(source), base_(base_offset), max_depth_(max_depth) {}

void JsonReader::fail_at(uint64_t offset, std::string_view what) const {
  fail(Code::kDataLoss, source_, ": invalid JSON at offset ", offset, ": ", what);
}

void JsonReader::error_pos(size_t pos, std::string_view what) const { fail_at(base_ + pos, what); }

void JsonReader::skip_space() {
  while (!at_end() && is_json_space(text_[pos_])) ++pos_;
}

void JsonReader::expect_char(char c, std::string_view what) {
  if (!next_is(c)) error(what);
  ++pos_;
}

JsonReader::Kind JsonReader::peek() {
  skip_space();
  if (at_end()) error("unexpected end of input, expected a value");
  switch (text_[pos_]) {
    case '{': return Kind::kObject;
    case '[': return Kind::kArray;
    case '"': return Kind::kString;
    case 't':
    case 'f': return Kind::kBool;
    case 'n': return Kind::kNull;
    default:
      if (text_[pos_] == '-' || is_digit(text_[pos_])) return Kind::kNumber;
      error("invalid value");
  }
}

void JsonReader::literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) error("invalid literal");
  pos_ += word.size();
}

void JsonReader::read_null() {
  if (peek() != Kind::kNull) error("expected null");
  literal("null");
}

bool JsonReader::read_bool() {
  if (peek() != Kind::kBool) error("expected true or false");
  const bool value = text_[pos_] == 't';
  literal(value ? "true" : "false");
  return value;
}

void JsonReader::skip_digits() {
  while (!at_end() && is_digit(text_[pos_])) ++pos_;
}

JsonReader::Number JsonReader::read_number() {
  if (peek() != Kind::kNumber) error("expected a number");
  const size_t start = pos_;
  if (next_is('-')) ++pos_;
  if (at_end() || !is_digit(text_[pos_])) error_pos(start, "invalid value");
  if (next_is('0')) {
    ++pos_;
    if (!at_end() && is_digit(text_[pos_])) error_pos(start, "leading zero in a number");
  } else {
    skip_digits();
  }
  bool integral = true;
  if (next_is('.')) {
    integral = false;
    ++pos_;
    if (at_end() || !is_digit(text_[pos_])) error("expected a digit after '.'");
    skip_digits();
  }
  if (next_is('e') || next_is('E')) {
    integral = false;
    ++pos_;
    if (next_is('+') || next_is('-')) ++pos_;
    if (at_end() || !is_digit(text_[pos_])) error("expected a digit in an exponent");
    skip_digits();
  }
  const char* first = text_.data() + start;
  const char* last = text_.data() + pos_;
  Number n{false, 0, 0};
  if (integral) {
    auto r = std::from_chars(first, last, n.i);
    if (r.ec == std::errc() && r.ptr == last) {
      n.is_int = true;
      n.d = static_cast<double>(n.i);
      return n;
    }
  }
  auto r = std::from_chars(first, last, n.d);
  if (r.ec != std::errc() || r.ptr != last || !std::isfinite(n.d)) error_pos(start, "number out of range");
  return n;
}

uint32_t JsonReader::hex4() {
  if (text_.size() - pos_ < 4) error("truncated \\u escape");
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    int h = hex_value(text_[pos_ + i]);
    if (h < 0) error("invalid hex digit in a \\u escape");
    v = v * 16 + static_cast<uint32_t>(h);
  }
  pos_ += 4;
  return v;
}

// After "\u": one code point, joining a surrogate pair.
uint32_t JsonReader::unicode_escape() {
  const size_t start = pos_ - 2;
  const uint32_t cp = hex4();
  if (cp >= 0xDC00 && cp <= 0xDFFF) error_pos(start, "lone low surrogate in a \\u escape");
  if (cp < 0xD800 || cp > 0xDBFF) return cp;
  if (text_.substr(pos_, 2) != "\\u") error_pos(start, "high surrogate without a low surrogate");
  pos_ += 2;
  const uint32_t low = hex4();
  if (low < 0xDC00 || low > 0xDFFF) error_pos(start, "high surrogate without a low surrogate");
  return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
}

void JsonReader::escape(std::string& out) {
  if (at_end()) error("unterminated string");
  const char c = text_[pos_++];
  switch (c) {
    case '"': out += '"'; break;
    case '\\': out += '\\'; break;
    case '/': out += '/'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'n': out += '\n'; break;
    case 'r': out += '\r'; break;
    case 't': out += '\t'; break;
    case 'u': append_utf8(out, unicode_escape()); break;
    default: error_pos(pos_ - 2, "invalid escape in a string");
  }
}

std::string JsonReader::read_string() {
  if (peek() != Kind::kString) error("expected a string");
  ++pos_;  // the opening quote
  std::string out;
  for (;;) {
    if (at_end()) error("unterminated string");
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      ++pos_;
      return out;
    }
    if (c == '\\') {
      ++pos_;
      escape(out);
    } else if (c < 0x20) {
      error("control character in a string");
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++pos_;
    } else {
      const size_t n = utf8_sequence_length(text_.substr(pos_));
      if (n == 0) error("invalid UTF-8 in a string");
      out.append(text_.substr(pos_, n));
      pos_ += n;
    }
  }
}

void JsonReader::push_frame() {
  if (frames_.size() >= static_cast<size_t>(max_depth_))
    error("nesting deeper than " + std::to_string(max_depth_) + " levels");
  ++pos_;  // the opening bracket
  frames_.emplace_back();
}

void JsonReader::begin_array() {
  if (peek() != Kind::kArray) error("expected an array");
  push_frame();
}

void JsonReader::begin_object() {
  if (peek() != Kind::kObject) error("expected an object");
  push_frame();
}

// Past the separator or the closing bracket; false when the container ended.
bool JsonReader::next_in_container(char close) {
  skip_space();
  Frame& frame = frames_.back();
  if (next_is(close)) {
    ++pos_;
    frames_.pop_back();
    return false;
  }
  if (!std::exchange(frame.first, false))
    expect_char(',', close == ']' ? "expected ',' or ']' in an array" : "expected ',' or '}' in an object");
  return true;
}

bool JsonReader::next_item() {
  const size_t at = pos_;
  if (!next_in_container(']')) return false;
  skip_space();
  if (next_is(']')) error_pos(at, "trailing ',' in an array");
  return true;
}

bool JsonReader::next_key(std::string& key) {
  if (!next_in_container('}')) return false;
  skip_space();
  if (!next_is('"')) error("expected a string key");
  const size_t key_pos = pos_;
  key = read_string();
  if (!frames_.back().keys.insert(key).second) error_pos(key_pos, "duplicate key " + json_quote(key));
  skip_space();
  expect_char(':', "expected ':' after an object key");
  return true;
}

void JsonReader::skip_value() {
  switch (peek()) {
    case Kind::kNull: read_null(); return;
    case Kind::kBool: read_bool(); return;
    case Kind::kNumber: read_number(); return;
    case Kind::kString: read_string(); return;
    case Kind::kArray:
      begin_array();
      while (next_item()) skip_value();
      return;
    case Kind::kObject: {
      begin_object();
      std::string key;
      while (next_key(key)) skip_value();
      return;
    }
  }
}

void JsonReader::end() {
  skip_space();
  if (!at_end()) error("unexpected characters after the value");
}

}  // namespace maxc
