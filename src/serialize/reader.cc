#include "serialize/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "base/error.h"
#include "base/guarded_mapping.h"
#include "graph/op_registry.h"
#include "serialize/graph_generated.h"

namespace maxc {
namespace {

using flatbuffers::String;
using flatbuffers::Vector;
using maxg::Header;
using maxg::kDataAlignment;
using maxg::kHeaderSize;

template <typename... Parts>
[[noreturn]] void data_loss(const Parts&... parts) {
  fail(Code::kDataLoss, parts...);
}
template <typename... Parts>
[[noreturn]] void invalid(const Parts&... parts) {
  fail(Code::kInvalidArgument, parts...);
}

// ---- dims --------------------------------------------------------------------------------------


// Dim::parse bounds its own length, depth and expansion, so hostile text can't exhaust the
// stack or memory; its errors are INVALID_ARGUMENT like the reader's own.
Dim parse_dim(std::string_view text) { return Dim::parse(text); }

// ---- the reader --------------------------------------------------------------------------------

class Reader {
 public:
  Reader(std::span<const uint8_t> file, std::shared_ptr<const void> keep_alive)
      : file_(file), keep_alive_(std::move(keep_alive)) {}

  LoadedGraph run() {
    check_header();
    verify_flatbuffer();
    root_ = fb::GetFile(fb_);
    if (root_->schema_version() == 0) data_loss("the schema version (File.schema_version) is missing or 0");
    const auto* graphs = root_->graphs();
    if (!graphs || graphs->size() == 0) data_loss("the file has no graphs");
    charge(graphs->size(), "graphs");
    claimed_.assign(graphs->size(), false);
    claimed_[0] = true;

    LoadedGraph out{build(0, 0), {}, root_->schema_version()};
    for (size_t i = 0; i < claimed_.size(); ++i)
      if (!claimed_[i]) invalid("graph ", i, " is not a subgraph of any graph");
    if (const auto* metadata = root_->metadata()) {
      charge(metadata->size(), "metadata");
      for (const fb::KeyValue* kv : *metadata) {
        std::string value = string(kv->value(), "metadata value");
        if (!out.metadata.emplace(string(kv->key(), "metadata key"), std::move(value)).second)
          invalid("metadata key '", kv->key()->str(), "' is repeated");
      }
    }
    try {
      out.graph.verify();
    } catch (const Error& e) {
      invalid(e.what());
    }
    return out;
  }

 private:
  // Every element the reader turns into an object is charged against the flatbuffer's size:
  // each takes at least one byte of it unless tables or vectors are shared, which our writer
  // never does and a hostile file does to make a small file expand into a huge graph.
  void charge(uint64_t units, const char* what) {
    if (units > budget_)
      data_loss("the flatbuffer (offset ", kHeaderSize, ", ", header_.flatbuffer_size,
                " bytes) references more data than it holds (at ", what, "): shared or overlapping tables");
    budget_ -= units;
  }

  std::string string(const String* s, const char* what) {
    if (!s) return {};
    charge(s->size(), what);
    return s->str();
  }

  void check_header() {
    uint64_t size = file_.size();
    if (size < kHeaderSize)
      data_loss("truncated: the file has ", size, " bytes but its header alone needs ", kHeaderSize);
    const uint8_t* p = file_.data();
    if (std::memcmp(p, maxg::kMagic, 4) != 0) data_loss("bad magic at offset 0: not a MAXG graph file");
    header_ = maxg::decode_header(p);
    const Header& h = header_;
    if (h.format_version != maxg::kFormatVersion)
      data_loss("unsupported format version ", h.format_version, " at offset 4 (this build reads version ",
                maxg::kFormatVersion, ")");
    if (h.flatbuffer_size > size - kHeaderSize)
      data_loss("truncated: the flatbuffer at offset ", kHeaderSize, " of ", h.flatbuffer_size,
                " bytes (header offset 8) runs past the end of the file (", size, " bytes)");
    if (h.flatbuffer_size >= FLATBUFFERS_MAX_BUFFER_SIZE)
      data_loss("the flatbuffer size ", h.flatbuffer_size, " (header offset 8) exceeds FlatBuffers' limit");
    uint64_t fb_end = kHeaderSize + h.flatbuffer_size;  // <= size: no overflow
    if (h.data_offset % kDataAlignment != 0 || h.data_offset < fb_end)
      data_loss("the data segment offset ", h.data_offset, " (header offset 16) must be a multiple of ",
                kDataAlignment, " past the flatbuffer's end at ", fb_end);
    if (h.data_offset > size)
      data_loss("truncated: the data segment starts at offset ", h.data_offset, " but the file has ", size, " bytes");
    if (h.data_size > size - h.data_offset)
      data_loss("truncated: the data segment at offset ", h.data_offset, " of ", h.data_size,
                " bytes runs past the end of the file (", size, " bytes)");
    if (h.data_size != size - h.data_offset)
      data_loss("the file has ", size - h.data_offset - h.data_size, " unexpected bytes after the data segment at offset ",
                h.data_offset + h.data_size);
    data_ = file_.subspan(static_cast<size_t>(h.data_offset), static_cast<size_t>(h.data_size));
    budget_ = h.flatbuffer_size + 1024;
  }

  void verify_flatbuffer() {
    const uint8_t* fb = file_.data() + kHeaderSize;
    auto fb_size = static_cast<size_t>(header_.flatbuffer_size);
    if (reinterpret_cast<uintptr_t>(fb) % alignof(uint64_t) != 0) {
      // FlatBuffers reads scalars in place: give it an aligned copy.
      aligned_.reset(new uint64_t[fb_size / 8 + 1]);
      std::memcpy(aligned_.get(), fb, fb_size);
      fb = reinterpret_cast<const uint8_t*>(aligned_.get());
    }
    flatbuffers::Verifier::Options options;
    options.max_depth = 32;  // our tables nest 8 deep
    // An unshared table takes at least 4 bytes, so this bounds the work by the size.
    options.max_tables = static_cast<flatbuffers::uoffset_t>(fb_size / 4 + 64);
    options.check_alignment = true;
    flatbuffers::Verifier verifier(fb, fb_size, options);
    if (!fb::VerifyFileBuffer(verifier))
      data_loss("the flatbuffer at offset ", kHeaderSize, " (", fb_size,
                " bytes) fails verification: truncated, corrupt or not a MAXG graph (file identifier)");
    fb_ = fb;
  }

  // ---- pieces ----

  // FlatBuffers reads a vector's elements in place, and its Verifier aligns only the 4-byte
  // length in front of them: a corrupt file can put 8-byte elements at 4 mod 8 (a misaligned
  // load). A writer aligns them (fb_ itself is 8-byte aligned), so refuse such a vector; an
  // empty one has nothing to read, and FlatBuffers writes it unaligned.
  template <typename T>
  const Vector<T>* aligned(const Vector<T>* v, const char* what) {
    if (!v || v->size() == 0) return v;
    const auto offset = static_cast<uint64_t>(v->Data() - fb_);
    if (offset % alignof(T) != 0)
      data_loss(what, ": the vector at offset ", kHeaderSize + offset, " is not ", alignof(T),
                "-byte aligned for its elements");
    return v;
  }

  std::vector<Dim> dims(const Vector<int64_t>* fixed, const Vector<flatbuffers::Offset<String>>* symbolic) {
    std::vector<Dim> out;
    if (symbolic) {
      if (fixed && fixed->size() != 0) invalid("a type has both static and symbolic dims");
      charge(symbolic->size(), "dims");
      out.reserve(symbolic->size());
      for (const String* s : *symbolic) {
        charge(s->size(), "dims");
        out.push_back(parse_dim(s->string_view()));
      }
    } else if (aligned(fixed, "static dims")) {
      charge(fixed->size(), "dims");
      out.reserve(fixed->size());
      for (int64_t d : *fixed) out.emplace_back(d);
    }
    return out;
  }

  TensorType type(const fb::TensorType* t, const std::string& what) {
    if (!t) invalid(what, " has no type");
    charge(1, "types");
    TensorType out{static_cast<DType>(t->dtype()), dims(t->static_dims(), t->dims()),
                   DeviceRef{static_cast<DeviceKind>(t->device_kind()), t->device_id()}, t->is_buffer()};
    out.validate(what);
    return out;
  }

  template <typename T>
  std::vector<T> scalars(const Vector<T>* v, const char* what) {
    if (!aligned(v, what)) return {};
    charge(v->size(), what);
    return std::vector<T>(v->begin(), v->end());
  }

  AttrValue attr_value(const fb::Attr* a) {
    auto missing = [&]() -> AttrValue { data_loss("attribute '", a->name()->str(), "' has no value"); };
    switch (a->value_type()) {
      case fb::AttrValue::IntAttr: {
        const auto* v = a->value_as_IntAttr();
        return v ? AttrValue(v->value()) : missing();
      }
      case fb::AttrValue::FloatAttr: {
        const auto* v = a->value_as_FloatAttr();
        return v ? AttrValue(v->value()) : missing();
      }
      case fb::AttrValue::StringAttr: {
        const auto* v = a->value_as_StringAttr();
        return v ? AttrValue(string(v->value(), "string attributes")) : missing();
      }
      case fb::AttrValue::DTypeAttr: {
        const auto* v = a->value_as_DTypeAttr();
        return v ? AttrValue(static_cast<DType>(v->value())) : missing();
      }
      case fb::AttrValue::IntsAttr: {
        const auto* v = a->value_as_IntsAttr();
        return v ? AttrValue(scalars(v->values(), "int list attributes")) : missing();
      }
      case fb::AttrValue::FloatsAttr: {
        const auto* v = a->value_as_FloatsAttr();
        return v ? AttrValue(scalars(v->values(), "float list attributes")) : missing();
      }
      case fb::AttrValue::DimsAttr: {
        const auto* v = a->value_as_DimsAttr();
        return v ? AttrValue(dims(v->static_dims(), v->dims())) : missing();
      }
      case fb::AttrValue::GraphAttr: {
        const auto* v = a->value_as_GraphAttr();
        return v ? AttrValue(GraphRef{v->index()}) : missing();
      }
      case fb::AttrValue::BoolAttr: {
        const auto* v = a->value_as_BoolAttr();
        return v ? AttrValue(v->value()) : missing();
      }
      case fb::AttrValue::DeviceAttr: {
        const auto* v = a->value_as_DeviceAttr();
        return v ? AttrValue(DeviceRef{static_cast<DeviceKind>(v->kind()), v->id()}) : missing();
      }
      default:
        invalid("attribute '", a->name()->str(), "' has unknown kind ", static_cast<int>(a->value_type()),
                " (a newer format?)");
    }
  }

  Attrs attrs(const Vector<flatbuffers::Offset<fb::Attr>>* list) {
    Attrs out;
    if (!list) return out;
    charge(list->size(), "attributes");
    for (const fb::Attr* a : *list) {
      std::string name = string(a->name(), "attribute names");
      if (out.has(name)) invalid("attribute '", name, "' is repeated");
      out.set(std::move(name), attr_value(a));
    }
    return out;
  }

  Constant constant(const fb::Constant* c, const std::string& what) {
    charge(1, "constants");
    Constant out;
    out.type = type(c->type(), what);
    std::span<const uint8_t> bytes;
    bool alias = false;
    switch (c->location()) {
      case fb::DataLocation::Inline:
        if (const auto* d = c->inline_data()) bytes = {d->data(), d->size()};
        charge(bytes.size(), "inline data");
        break;
      case fb::DataLocation::Segment: {
        uint64_t offset = c->data_offset(), size = c->data_size();
        uint64_t at = header_.data_offset + offset;  // may wrap; only printed
        if (offset % kDataAlignment != 0)
          data_loss(what, ": its data offset ", offset, " in the data segment is not ", kDataAlignment, "-byte aligned");
        if (offset > data_.size() || size > data_.size() - offset)
          data_loss(what, ": its ", size, " bytes at file offset ", at, " run past the data segment (offset ",
                    header_.data_offset, ", ", data_.size(), " bytes)");
        if (offset < next_blob_)
          data_loss(what, ": its bytes at file offset ", at, " overlap the previous constant's (which end at ",
                    header_.data_offset + next_blob_, ")");
        next_blob_ = offset + size;
        bytes = data_.subspan(static_cast<size_t>(offset), static_cast<size_t>(size));
        alias = keep_alive_ && reinterpret_cast<uintptr_t>(bytes.data()) % 16 == 0;
        break;
      }
      default:
        data_loss(what, ": unknown data location ", static_cast<int>(c->location()));
    }
    if (alias) {
      out.data = std::shared_ptr<const uint8_t>(keep_alive_, bytes.data());
      out.size = bytes.size();
    } else {
      Constant copy = Constant::copy_of(out.type, bytes);
      out.data = std::move(copy.data);
      out.size = copy.size;
    }
    return out;
  }

  // ---- graphs ----

  Graph build(uint32_t index, int depth) {
    const fb::Graph* fg = root_->graphs()->Get(index);
    Graph g(string(fg->name(), "graph names"));
    auto context = [&](const Error& e) { return Error(e.code(), str_cat("graph ", index, " '", g.name(), "': ", e.what())); };
    // The constants first: the writer lays out the blobs of a graph before its subgraphs'.
    std::vector<Constant> constants;
    try {
      constants = decode_constants(fg);
    } catch (const Error& e) {
      throw context(e);
    }
    if (const auto* subs = fg->subgraphs()) {
      charge(subs->size(), "subgraphs");
      for (uint32_t child : *subs) {
        if (child <= index || child >= claimed_.size() || claimed_[child])
          data_loss("graph ", index, " lists graph ", child, " as a subgraph; each subgraph must be a later graph (of ",
                    claimed_.size(), ") listed by exactly one parent");
        if (depth + 1 > maxg::kMaxGraphDepth)
          invalid("subgraphs nest deeper than ", maxg::kMaxGraphDepth, " levels");
        claimed_[child] = true;
        g.add_subgraph(build(child, depth + 1));
      }
    }
    try {
      fill(g, fg, constants);
    } catch (const Error& e) {
      throw context(e);
    }
    return g;
  }

  std::vector<Constant> decode_constants(const fb::Graph* fg) {
    std::vector<Constant> constants;
    if (const auto* list = fg->constants()) {
      charge(list->size(), "constants");
      constants.reserve(list->size());
      for (uint32_t i = 0; i < list->size(); ++i) constants.push_back(constant(list->Get(i), str_cat("constant ", i)));
    }
    return constants;
  }

  void fill(Graph& g, const fb::Graph* fg, const std::vector<Constant>& constants) {
    // The recorded types, by value id.
    std::vector<TensorType> recorded;
    if (const auto* values = fg->values()) {
      charge(values->size(), "values");
      recorded.reserve(values->size());
      for (uint32_t i = 0; i < values->size(); ++i) recorded.push_back(type(values->Get(i), str_cat("value %", i)));
    }
    // Replays the construction: inputs and ops merged by the value ids they create.
    const auto* inputs = fg->inputs();
    const auto* ops = fg->ops();
    size_t num_inputs = inputs ? inputs->size() : 0, num_ops = ops ? ops->size() : 0;
    charge(num_inputs + num_ops, "inputs and ops");
    size_t next_input = 0, next_op = 0;
    while (next_input < num_inputs || next_op < num_ops) {
      auto n = static_cast<ValueId>(g.num_values());
      const fb::Op* op = next_op < num_ops ? ops->Get(static_cast<uint32_t>(next_op)) : nullptr;
      const fb::NamedValue* input = next_input < num_inputs ? inputs->Get(static_cast<uint32_t>(next_input)) : nullptr;
      size_t op_outputs = op && op->outputs() ? op->outputs()->size() : 0;
      if (op && op_outputs > 0 && op->outputs()->Get(0) == n) {
        add_op(g, next_op++, op, recorded, constants);
      } else if (input && input->value() == n) {
        if (n >= recorded.size()) invalid("input ", next_input, " (value %", n, ") has no recorded type");
        g.add_input(string(input->name(), "input names"), recorded[n]);
        ++next_input;
      } else if (op && op_outputs == 0) {
        add_op(g, next_op++, op, recorded, constants);
      } else {
        invalid("value %", n, " is neither made by the next input (", next_input, ") nor by the next op (", next_op, ")");
      }
    }
    if (g.num_values() != recorded.size())
      invalid("records ", recorded.size(), " value types for ", g.num_values(), " values");
    if (g.constants().size() != constants.size())
      invalid("has ", constants.size(), " constants but its constant ops use ", g.constants().size());

    if (const auto* weights = fg->weights()) {
      charge(weights->size(), "weights");
      if (weights->size() != g.weights().size())
        invalid("lists ", weights->size(), " weights but its ops declare ", g.weights().size());
      for (const fb::NamedValue* w : *weights) {
        auto it = g.weights().find(w->name()->string_view());
        if (it == g.weights().end() || it->second != w->value())
          invalid("weight '", w->name()->str(), "' (%", w->value(), ") is not declared by a constant_external op");
      }
    } else if (!g.weights().empty()) {
      invalid("lists no weights but its ops declare ", g.weights().size());
    }

    std::vector<NamedValue> outputs;
    if (const auto* list = fg->outputs()) {
      charge(list->size(), "outputs");
      outputs.reserve(list->size());
      for (const fb::NamedValue* out : *list) outputs.push_back(NamedValue{string(out->name(), "output names"), out->value()});
    }
    g.set_outputs(std::move(outputs));
  }

  void add_op(Graph& g, size_t k, const fb::Op* op, const std::vector<TensorType>& recorded,
              const std::vector<Constant>& constants) {
    const auto* opcodes = root_->opcodes();
    uint32_t code = op->opcode();
    if (!opcodes || code >= opcodes->size())
      data_loss("op ", k, ": op code index ", code, " is out of range (the file has ",
                opcodes ? opcodes->size() : 0, " op codes)");
    const fb::OpCode* opcode = opcodes->Get(code);
    std::string_view name = opcode->name()->string_view();
    int32_t version = opcode->version();
    try {
      charge(name.size(), "op names");
      if (version < 1) invalid("op code ", code, " has version ", version, "; versions start at 1");
      std::vector<ValueId> inputs = scalars(op->inputs(), "op inputs");
      std::vector<ValueId> want = scalars(op->outputs(), "op outputs");
      Attrs a = attrs(op->attrs());

      std::vector<ValueId> got;
      const AttrValue* index = a.find("index");
      const OpSchema* newest = OpRegistry::global().find(name);
      if (name == "constant" && newest && newest->version == version && a.size() == 1 && index &&
          std::holds_alternative<int64_t>(*index) && std::get<int64_t>(*index) == static_cast<int64_t>(g.constants().size())) {
        // The first use of the next constant-table entry: add_constant appends it.
        auto i = static_cast<size_t>(std::get<int64_t>(*index));
        if (i >= constants.size())
          invalid("attribute 'index' is ", i, " but the graph has ", constants.size(), " constants");
        got = {g.add_constant(constants[i])};
      } else {
        got = g.add_op(name, version, inputs, a);
      }
      if (got != want)
        invalid("records output values ", list(want), " but the graph numbered them ", list(got));
      for (size_t j = 0; j < got.size(); ++j) {
        if (got[j] >= recorded.size()) invalid("output ", j, " (%", got[j], ") has no recorded type");
        if (!(recorded[got[j]] == g.type(got[j])))
          invalid("output ", j, " (%", got[j], ") is recorded as ", recorded[got[j]], " but infers as ", g.type(got[j]));
      }
    } catch (const Error& e) {
      Code c = e.code() == Code::kDataLoss ? Code::kDataLoss : Code::kInvalidArgument;
      fail(c, "op ", k, " '", name, "': ", e.what());
    }
  }

  static std::string list(const std::vector<ValueId>& ids) {
    std::string out = "[";
    for (size_t i = 0; i < ids.size(); ++i) out += str_cat(i ? ", %" : "%", ids[i]);
    return out + "]";
  }

  std::span<const uint8_t> file_;
  std::shared_ptr<const void> keep_alive_;
  Header header_;
  std::span<const uint8_t> data_;
  std::unique_ptr<uint64_t[]> aligned_;
  const uint8_t* fb_ = nullptr;
  const fb::File* root_ = nullptr;
  uint64_t budget_ = 0;
  uint64_t next_blob_ = 0;  // blobs are in file order and never overlap
  std::vector<bool> claimed_;
};

LoadedGraph read(std::span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive, const std::string& what) {
  try {
    return Reader(bytes, std::move(keep_alive)).run();
  } catch (const Error& e) {
    Code c = e.code() == Code::kDataLoss ? Code::kDataLoss : Code::kInvalidArgument;
    fail(c, "cannot load ", what, ": ", e.what());
  } catch (const std::bad_alloc&) {
    fail(Code::kResourceExhausted, "cannot load ", what, ": out of memory");
  } catch (const std::length_error& e) {
    fail(Code::kResourceExhausted, "cannot load ", what, ": too large: ", e.what());
  } catch (const std::exception& e) {
    fail(Code::kInvalidArgument, "cannot load ", what, ": ", e.what());
  }
}

}  // namespace

LoadedGraph deserialize_with_metadata(std::span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive) {
  return read(bytes, std::move(keep_alive), "a serialized graph");
}

Graph deserialize(std::span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive) {
  return deserialize_with_metadata(bytes, std::move(keep_alive)).graph;
}

LoadedGraph load_with_metadata(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    Code code = err == ENOENT || err == ENOTDIR ? Code::kNotFound
                : err == EACCES || err == EPERM ? Code::kPermissionDenied
                                                : Code::kUnavailable;
    fail(code, "cannot open graph file '", path, "': ", std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(Code::kUnavailable, "cannot stat graph file '", path, "': ", std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(Code::kInvalidArgument, "graph file '", path, "' is not a regular file");
  }
  auto size = static_cast<uint64_t>(st.st_size);
  if (size == 0) {
    ::close(fd);
    return read({}, nullptr, "graph file '" + path + "'");
  }
  void* map = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) fail(Code::kUnavailable, "cannot map graph file '", path, "': ", std::strerror(err));
  // Guarded (base/guarded_mapping.h): the data segment's constants are read in place, so a
  // file that shrinks under the model makes its execute fail with DATA_LOSS, not SIGBUS.
  auto guard = std::make_shared<GuardedMapping>(map, size, path);
  std::shared_ptr<const void> mapping(map, [size, guard](const void* p) mutable {
    guard.reset();  // unregistered before the pages go
    ::munmap(const_cast<void*>(p), static_cast<size_t>(size));
  });
  return read({static_cast<const uint8_t*>(map), static_cast<size_t>(size)}, std::move(mapping),
              "graph file '" + path + "'");
}

Graph load(const std::string& path) { return load_with_metadata(path).graph; }

}  // namespace maxc
