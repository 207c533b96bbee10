#include "support/onnx_mutator.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/onnx_schema.h"

namespace maxfuzz {
namespace {

using Rng = std::mt19937;  // well mixed from small seeds (minstd_rand's first draws are not)

size_t pick(Rng& rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

// Where a field sits: the message (its field list) and the index in it.
struct Site {
  std::vector<Field>* fields;
  size_t index;
  Field& field() const { return (*fields)[index]; }
};

void collect(std::vector<Field>& fields, std::vector<Site>* sites) {
  for (size_t i = 0; i < fields.size(); ++i) {
    sites->push_back({&fields, i});
    if (fields[i].is_message()) collect(fields[i].children, sites);
  }
}

bool has_role(const Field& f, const char* role) { return f.schema && f.schema->role == role; }

// Values near the edges of what sizes, counts and indices can hold.
int64_t boundary_int(Rng& rng, int64_t old) {
  static const int64_t kValues[] = {0, 1, 2, 3, 4, 5, 7, 8, 16, 64, 255, 256, 4096, 65536,
                                    -1, -2, -3, -128, INT32_MAX, int64_t{1} << 31, int64_t{1} << 32,
                                    (int64_t{1} << 32) + 1, int64_t{1} << 40, (int64_t{1} << 58) + 1,
                                    (int64_t{1} << 59) + 1, int64_t{1} << 61, int64_t{1} << 62,
                                    INT64_MAX, INT64_MIN, INT64_MAX / 8, INT32_MIN};
  const uint64_t u = static_cast<uint64_t>(old);  // wraps, as a file's varint may
  switch (pick(rng, 5)) {
    case 0: return static_cast<int64_t>(u + 1);
    case 1: return static_cast<int64_t>(u - 1);
    case 2: return static_cast<int64_t>(0 - u);
    case 3: return static_cast<int64_t>(pick(rng, 12)) - 3;
    default: return kValues[pick(rng, std::size(kValues))];
  }
}

float boundary_float(Rng& rng) {
  static const float kValues[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 3.0f, 1e-45f, 1e-7f, 1e10f, -1e10f,
                                  3.4e38f, 2147483648.0f, 9.3e18f, std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  return kValues[pick(rng, std::size(kValues))];
}

double boundary_double(Rng& rng) { return static_cast<double>(boundary_float(rng)); }

uint64_t mutate_scalar(Rng& rng, WireType wire, uint64_t v, const Field& f) {
  if (wire == WireType::kFixed32) return std::bit_cast<uint32_t>(boundary_float(rng));
  if (wire == WireType::kFixed64) return std::bit_cast<uint64_t>(boundary_double(rng));
  if (has_role(f, kRoleDtype)) return pick(rng, 26);  // every TensorProto.DataType and a few past
  if (has_role(f, kRoleOpset)) return pick(rng, 26);
  return static_cast<uint64_t>(boundary_int(rng, static_cast<int64_t>(v)));
}

WireType packed_wire(Payload p) {
  return p == Payload::kPackedFixed32 ? WireType::kFixed32
         : p == Payload::kPackedFixed64 ? WireType::kFixed64
                                        : WireType::kVarint;
}

bool is_packed(const Field& f) {
  return f.wire == WireType::kLengthDelimited && f.payload() != Payload::kBytes && f.payload() != Payload::kMessage;
}

// One edit of one scalar: a plain field or an element of a packed run (which may also grow
// or shrink, so data and dims disagree).
bool edit_scalar(Rng& rng, std::vector<Site>& sites) {
  std::vector<Site> scalars;
  for (const Site& s : sites)
    if (s.field().wire != WireType::kLengthDelimited || is_packed(s.field())) scalars.push_back(s);
  if (scalars.empty()) return false;
  Field& f = scalars[pick(rng, scalars.size())].field();
  if (!is_packed(f)) {
    f.scalar = mutate_scalar(rng, f.wire, f.scalar, f);
    return true;
  }
  const WireType wire = packed_wire(f.payload());
  switch (pick(rng, 4)) {
    case 0:
      f.packed.insert(f.packed.begin() + pick(rng, f.packed.size() + 1), mutate_scalar(rng, wire, 1, f));
      break;
    case 1:
      if (!f.packed.empty()) f.packed.erase(f.packed.begin() + pick(rng, f.packed.size()));
      break;
    default:
      if (f.packed.empty()) return false;
      uint64_t& v = f.packed[pick(rng, f.packed.size())];
      v = mutate_scalar(rng, wire, v, f);
  }
  return true;
}

// A repeated field (or any field) duplicated next to itself, or dropped.
bool duplicate_or_drop(Rng& rng, std::vector<Site>& sites) {
  const Site s = sites[pick(rng, sites.size())];
  if (pick(rng, 2) == 0) {
    Field copy = s.field();
    s.fields->insert(s.fields->begin() + s.index + pick(rng, 2), std::move(copy));
  } else {
    s.fields->erase(s.fields->begin() + s.index);
  }
  return true;
}

// A node input or output (or an initializer, value info) renamed to another name the model
// uses, or to the empty name of an omitted optional input.
bool rewire(Rng& rng, std::vector<Site>& sites) {
  std::vector<Site> names;
  for (const Site& s : sites)
    if (has_role(s.field(), kRoleName) && s.field().wire == WireType::kLengthDelimited) names.push_back(s);
  if (names.size() < 2) return false;
  Field& target = names[pick(rng, names.size())].field();
  target.bytes = pick(rng, 8) == 0 ? std::string() : names[pick(rng, names.size())].field().bytes;
  return true;
}

// The bytes of a string or raw_data field through libFuzzer's own byte mutations.
bool mutate_bytes(Rng& rng, std::vector<Site>& sites, ByteMutator bytes) {
  std::vector<Site> blobs;
  for (const Site& s : sites)
    if (s.field().wire == WireType::kLengthDelimited && s.field().payload() == Payload::kBytes) blobs.push_back(s);
  if (blobs.empty()) return false;
  std::string& b = blobs[pick(rng, blobs.size())].field().bytes;
  if (pick(rng, 3) == 0) {
    b.resize(pick(rng, 2 * b.size() + 9));  // data shorter or longer than its dims say
    return true;
  }
  const size_t max_size = b.size() + 16;
  b.resize(max_size);
  const size_t n = bytes(reinterpret_cast<uint8_t*>(b.data()), max_size - 16, max_size);
  b.resize(n);
  return true;
}

bool edit_once(Rng& rng, std::vector<Field>& model, ByteMutator bytes) {
  std::vector<Site> sites;
  collect(model, &sites);
  if (sites.empty()) return false;
  switch (pick(rng, 10)) {
    case 0: case 1: case 2: case 3: return edit_scalar(rng, sites);
    case 4: case 5: return duplicate_or_drop(rng, sites);
    case 6: case 7: return rewire(rng, sites);
    default: return mutate_bytes(rng, sites, bytes);
  }
}

}  // namespace

size_t mutate_onnx(uint8_t* data, size_t size, size_t max_size, unsigned int seed, ByteMutator bytes) {
  Rng rng(seed);
  auto model = parse_message(data, size, onnx_model_schema());
  if (!model || model->empty() || pick(rng, 20) == 0) return bytes(data, size, max_size);
  const size_t edits = 1 + pick(rng, 3);
  bool changed = false;
  for (size_t i = 0; i < edits; ++i) changed |= edit_once(rng, *model, bytes);
  const std::string out = encode_message(*model);
  if (!changed || out.size() > max_size) return bytes(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace maxfuzz
