#include "support/proto_tree.h"

namespace maxfuzz {
namespace {

constexpr int kMaxDepth = 32;

struct Cursor {
  const uint8_t* p;
  const uint8_t* end;
  bool varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p == end) return false;
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *out = v;
        return true;
      }
    }
    return false;
  }
  bool fixed(int n, uint64_t* out) {
    if (end - p < n) return false;
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
    p += n;
    *out = v;
    return true;
  }
};

bool parse_packed(const std::string& bytes, Payload payload, std::vector<uint64_t>* out) {
  Cursor c{reinterpret_cast<const uint8_t*>(bytes.data()), reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size()};
  while (c.p != c.end) {
    uint64_t v = 0;
    const bool ok = payload == Payload::kPackedVarint   ? c.varint(&v)
                    : payload == Payload::kPackedFixed32 ? c.fixed(4, &v)
                                                          : c.fixed(8, &v);
    if (!ok) return false;
    out->push_back(v);
  }
  return true;
}

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_fixed(std::string* out, int n, uint64_t v) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

void put_length_delimited(std::string* out, uint32_t number, const std::string& payload) {
  put_varint(out, (static_cast<uint64_t>(number) << 3) | 2);
  put_varint(out, payload.size());
  out->append(payload);
}

}  // namespace

const FieldSchema* MessageSchema::find(uint32_t number) const {
  for (const FieldSchema& f : fields)
    if (f.number == number) return &f;
  return nullptr;
}

std::optional<std::vector<Field>> parse_message(const uint8_t* data, size_t size, const MessageSchema& schema,
                                                int depth) {
  if (depth > kMaxDepth) return std::nullopt;
  std::vector<Field> fields;
  Cursor c{data, data + size};
  while (c.p != c.end) {
    uint64_t tag;
    if (!c.varint(&tag) || (tag >> 3) == 0 || (tag >> 3) > UINT32_MAX) return std::nullopt;
    Field f;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<WireType>(tag & 7);
    f.schema = schema.find(f.number);
    switch (f.wire) {
      case WireType::kVarint:
        if (!c.varint(&f.scalar)) return std::nullopt;
        break;
      case WireType::kFixed64:
        if (!c.fixed(8, &f.scalar)) return std::nullopt;
        break;
      case WireType::kFixed32:
        if (!c.fixed(4, &f.scalar)) return std::nullopt;
        break;
      case WireType::kLengthDelimited: {
        uint64_t n;
        if (!c.varint(&n) || n > static_cast<uint64_t>(c.end - c.p)) return std::nullopt;
        const uint8_t* payload = c.p;
        c.p += n;
        if (f.payload() == Payload::kMessage) {
          auto children = parse_message(payload, n, *f.schema->message, depth + 1);
          if (!children) return std::nullopt;
          f.children = std::move(*children);
        } else {
          f.bytes.assign(reinterpret_cast<const char*>(payload), n);
          if (f.payload() != Payload::kBytes) {
            if (!parse_packed(f.bytes, f.payload(), &f.packed)) return std::nullopt;
            f.bytes.clear();
          }
        }
        break;
      }
      default:
        return std::nullopt;  // groups (3, 4) and undefined wire types
    }
    fields.push_back(std::move(f));
  }
  return fields;
}

std::string encode_message(const std::vector<Field>& fields) {
  std::string out;
  for (const Field& f : fields) {
    switch (f.wire) {
      case WireType::kVarint:
        put_varint(&out, static_cast<uint64_t>(f.number) << 3);
        put_varint(&out, f.scalar);
        break;
      case WireType::kFixed64:
        put_varint(&out, (static_cast<uint64_t>(f.number) << 3) | 1);
        put_fixed(&out, 8, f.scalar);
        break;
      case WireType::kFixed32:
        put_varint(&out, (static_cast<uint64_t>(f.number) << 3) | 5);
        put_fixed(&out, 4, f.scalar);
        break;
      case WireType::kLengthDelimited: {
        std::string payload;
        switch (f.payload()) {
          case Payload::kMessage: payload = encode_message(f.children); break;
          case Payload::kBytes: payload = f.bytes; break;
          case Payload::kPackedVarint:
            for (uint64_t v : f.packed) put_varint(&payload, v);
            break;
          case Payload::kPackedFixed32:
            for (uint64_t v : f.packed) put_fixed(&payload, 4, v);
            break;
          case Payload::kPackedFixed64:
            for (uint64_t v : f.packed) put_fixed(&payload, 8, v);
            break;
        }
        put_length_delimited(&out, f.number, payload);
        break;
      }
    }
  }
  return out;
}

}  // namespace maxfuzz
