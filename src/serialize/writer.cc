#include "serialize/writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <utility>

#include <flatbuffers/flatbuffers.h>

#include "base/error.h"
#include "serialize/graph_generated.h"

namespace maxc {
namespace {

using flatbuffers::Offset;
using flatbuffers::String;
using flatbuffers::Vector;
using maxg::align_up;
using maxg::Header;
using maxg::kDataAlignment;
using maxg::kHeaderSize;

// Inline constants stop at this total, so the flatbuffer stays far below its 2 GiB limit;
// past it even small constants go to the data segment.
constexpr uint64_t kMaxInlineTotal = uint64_t{256} << 20;
// A flatbuffer past this is refused before the builder reaches its hard 2 GiB limit.
constexpr size_t kMaxFlatbufferSize = size_t{1536} << 20;

struct Blob {
  uint64_t offset = 0;  // from the start of the data segment
  std::span<const uint8_t> bytes;
};

// The file minus the blobs' bytes: header, flatbuffer and where each blob goes.
struct Encoded {
  Header header;
  flatbuffers::DetachedBuffer flatbuffer;
  std::vector<Blob> blobs;

  uint64_t file_size() const { return header.data_offset + header.data_size; }
  void encode_prefix(uint8_t* out) const {  // header + flatbuffer; the caller zeroes the rest
    maxg::encode_header(header, out);
    std::memcpy(out + kHeaderSize, flatbuffer.data(), flatbuffer.size());
  }
};

class Writer {
 public:
  explicit Writer(const SerializeOptions& options) : options_(options), fbb_(size_t{1} << 16) {}

  Encoded run(const Graph& main) {
    flatten(main, 0);
    collect_opcodes();

    std::vector<Offset<fb::OpCode>> opcodes;
    for (const auto& [key, index] : opcode_index_)
      opcodes.push_back(fb::CreateOpCode(fbb_, fbb_.CreateString(key.first), key.second));
    auto opcodes_vec = fbb_.CreateVector(opcodes);

    std::vector<Offset<fb::Graph>> graphs;
    for (const Node& node : nodes_) {
      graphs.push_back(graph(*node.graph, node.children));
      if (fbb_.GetSize() > kMaxFlatbufferSize)
        fail(Code::kInvalidArgument, "cannot serialize graph '", main.name(), "': its structure exceeds ",
             kMaxFlatbufferSize, " bytes");
    }
    auto graphs_vec = fbb_.CreateVector(graphs);

    std::vector<Offset<fb::KeyValue>> metadata;
    for (const auto& [key, value] : options_.metadata)
      metadata.push_back(fb::CreateKeyValue(fbb_, fbb_.CreateString(key), fbb_.CreateString(value)));
    auto metadata_vec = fbb_.CreateVector(metadata);

    fb::FinishFileBuffer(fbb_, fb::CreateFile(fbb_, maxg::kSchemaVersion, opcodes_vec, graphs_vec, metadata_vec));

    Encoded out;
    out.header.flatbuffer_size = fbb_.GetSize();
    out.header.data_offset = align_up(kHeaderSize + out.header.flatbuffer_size, kDataAlignment);
    out.header.data_size = data_cursor_;
    out.flatbuffer = fbb_.Release();
    out.blobs = std::move(blobs_);
    return out;
  }

 private:
  struct Node {
    const Graph* graph;
    std::vector<uint32_t> children;
  };

  // Pre-order: a graph's index is below its subgraphs'.
  uint32_t flatten(const Graph& g, int depth) {
    if (depth > maxg::kMaxGraphDepth)
      fail(Code::kInvalidArgument, "cannot serialize graph '", g.name(), "': subgraphs nest deeper than ",
           maxg::kMaxGraphDepth, " levels");
    auto index = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(Node{&g, {}});
    for (const Graph& sub : g.subgraphs()) {
      uint32_t child = flatten(sub, depth + 1);
      nodes_[index].children.push_back(child);
    }
    return index;
  }

  // Op codes sorted by (name, version), so their numbering does not depend on op order.
  void collect_opcodes() {
    for (const Node& node : nodes_)
      for (const Op& op : node.graph->ops()) opcode_index_.emplace(std::make_pair(op.schema->name, op.schema->version), 0);
    uint32_t i = 0;
    for (auto& [key, index] : opcode_index_) index = i++;
  }

  Offset<Vector<int64_t>> static_dims(const std::vector<Dim>& dims) {
    std::vector<int64_t> values;
    values.reserve(dims.size());
    for (const Dim& d : dims) values.push_back(d.static_value());
    return fbb_.CreateVector(values);
  }

  Offset<Vector<Offset<String>>> dim_strings(const std::vector<Dim>& dims) {
    std::vector<Offset<String>> strings;
    strings.reserve(dims.size());
    for (const Dim& d : dims) {
      std::string text = d.to_string();
      if (text.size() > maxg::kMaxDimText)  // the reader would refuse it
        fail(Code::kInvalidArgument, "cannot serialize dim '", text.substr(0, 64), "...': its text exceeds ",
             maxg::kMaxDimText, " bytes");
      strings.push_back(fbb_.CreateString(text));
    }
    return fbb_.CreateVector(strings);
  }

  static bool all_static(const std::vector<Dim>& dims) {
    return std::all_of(dims.begin(), dims.end(), [](const Dim& d) { return d.is_static(); });
  }

  Offset<fb::TensorType> type(const TensorType& t) {
    Offset<Vector<int64_t>> fixed;
    Offset<Vector<Offset<String>>> symbolic;
    if (all_static(t.dims)) fixed = static_dims(t.dims);
    else symbolic = dim_strings(t.dims);
    return fb::CreateTensorType(fbb_, static_cast<int32_t>(t.dtype), fixed, symbolic,
                                static_cast<int32_t>(t.device.kind), t.device.id, t.is_buffer);
  }

  std::pair<fb::AttrValue, Offset<void>> attr_value(const AttrValue& value) {
    struct Encoder {
      flatbuffers::FlatBufferBuilder& fbb;
      Writer& w;
      using R = std::pair<fb::AttrValue, Offset<void>>;
      R operator()(int64_t v) const { return {fb::AttrValue::IntAttr, fb::CreateIntAttr(fbb, v).Union()}; }
      R operator()(double v) const { return {fb::AttrValue::FloatAttr, fb::CreateFloatAttr(fbb, v).Union()}; }
      R operator()(const std::string& v) const {
        return {fb::AttrValue::StringAttr, fb::CreateStringAttr(fbb, fbb.CreateString(v)).Union()};
      }
      R operator()(DType v) const {
        return {fb::AttrValue::DTypeAttr, fb::CreateDTypeAttr(fbb, static_cast<int32_t>(v)).Union()};
      }
      R operator()(const std::vector<int64_t>& v) const {
        return {fb::AttrValue::IntsAttr, fb::CreateIntsAttr(fbb, fbb.CreateVector(v)).Union()};
      }
      R operator()(const std::vector<double>& v) const {
        return {fb::AttrValue::FloatsAttr, fb::CreateFloatsAttr(fbb, fbb.CreateVector(v)).Union()};
      }
      R operator()(const std::vector<Dim>& v) const {
        if (all_static(v)) return {fb::AttrValue::DimsAttr, fb::CreateDimsAttr(fbb, w.static_dims(v), 0).Union()};
        return {fb::AttrValue::DimsAttr, fb::CreateDimsAttr(fbb, 0, w.dim_strings(v)).Union()};
      }
      R operator()(GraphRef v) const { return {fb::AttrValue::GraphAttr, fb::CreateGraphAttr(fbb, v.index).Union()}; }
      R operator()(bool v) const { return {fb::AttrValue::BoolAttr, fb::CreateBoolAttr(fbb, v).Union()}; }
      R operator()(DeviceRef v) const {
        return {fb::AttrValue::DeviceAttr, fb::CreateDeviceAttr(fbb, static_cast<int32_t>(v.kind), v.id).Union()};
      }
    };
    return std::visit(Encoder{fbb_, *this}, value);
  }

  Offset<Vector<Offset<fb::NamedValue>>> named_values(const std::vector<NamedValue>& list) {
    std::vector<Offset<fb::NamedValue>> out;
    out.reserve(list.size());
    for (const NamedValue& nv : list) out.push_back(fb::CreateNamedValue(fbb_, fbb_.CreateString(nv.name), nv.value));
    return fbb_.CreateVector(out);
  }

  Offset<fb::Constant> constant(const Constant& c) {
    auto t = type(c.type);
    bool small = c.size < options_.inline_limit && inline_total_ + c.size <= kMaxInlineTotal;
    if (small) {
      inline_total_ += c.size;
      auto bytes = fbb_.CreateVector(c.data.get(), c.size);
      return fb::CreateConstant(fbb_, t, fb::DataLocation::Inline, bytes);
    }
    uint64_t offset = align_up(data_cursor_, kDataAlignment);
    data_cursor_ = offset + c.size;
    blobs_.push_back(Blob{offset, c.bytes()});
    return fb::CreateConstant(fbb_, t, fb::DataLocation::Segment, 0, offset, c.size);
  }

  Offset<fb::Graph> graph(const Graph& g, const std::vector<uint32_t>& children) {
    auto name = fbb_.CreateString(g.name());
    auto subgraphs = fbb_.CreateVector(children);

    std::vector<Offset<fb::TensorType>> values;
    values.reserve(g.num_values());
    for (size_t id = 0; id < g.num_values(); ++id) values.push_back(type(g.type(static_cast<ValueId>(id))));
    auto values_vec = fbb_.CreateVector(values);

    auto inputs = named_values(g.inputs());

    std::vector<Offset<fb::Op>> ops;
    ops.reserve(g.ops().size());
    for (const Op& op : g.ops()) {
      std::vector<Offset<fb::Attr>> attrs;
      for (const auto& [attr_name, value] : op.attrs) {  // sorted by name
        auto n = fbb_.CreateString(attr_name);
        auto [kind, table] = attr_value(value);
        attrs.push_back(fb::CreateAttr(fbb_, n, kind, table));
      }
      auto attrs_vec = fbb_.CreateVector(attrs);
      auto in = fbb_.CreateVector(op.inputs);
      auto out = fbb_.CreateVector(op.outputs);
      uint32_t code = opcode_index_.at(std::make_pair(op.schema->name, op.schema->version));
      ops.push_back(fb::CreateOp(fbb_, code, in, out, attrs_vec));
    }
    auto ops_vec = fbb_.CreateVector(ops);

    std::vector<Offset<fb::Constant>> constants;
    constants.reserve(g.constants().size());
    for (const Constant& c : g.constants()) constants.push_back(constant(c));
    auto constants_vec = fbb_.CreateVector(constants);

    std::vector<NamedValue> weight_list;
    for (const auto& [weight, id] : g.weights()) weight_list.push_back(NamedValue{weight, id});
    auto weights = named_values(weight_list);
    auto outputs = named_values(g.outputs());

    return fb::CreateGraph(fbb_, name, subgraphs, values_vec, inputs, ops_vec, constants_vec, weights, outputs);
  }

  const SerializeOptions& options_;
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<Node> nodes_;
  std::map<std::pair<std::string, int32_t>, uint32_t> opcode_index_;
  std::vector<Blob> blobs_;
  uint64_t data_cursor_ = 0;
  uint64_t inline_total_ = 0;
};

Encoded encode(const Graph& graph, const SerializeOptions& options) { return Writer(options).run(graph); }

// ---- files -------------------------------------------------------------------------------------

[[noreturn]] void io_fail(const std::string& what, const std::string& path, int err) {
  Code code = err == ENOENT || err == ENOTDIR ? Code::kNotFound
              : err == EACCES || err == EPERM || err == EROFS ? Code::kPermissionDenied
              : err == ENOSPC || err == EDQUOT || err == EFBIG ? Code::kResourceExhausted
                                                                 : Code::kUnavailable;
  fail(code, "cannot ", what, " '", path, "': ", std::strerror(err));
}

class FileWriter {
 public:
  FileWriter(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) io_fail("create", path_, errno);
  }
  ~FileWriter() {
    if (fd_ >= 0) ::close(fd_);
  }

  void write(const uint8_t* p, uint64_t n) {
    while (n > 0) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, uint64_t{1} << 30));
      ssize_t done = ::write(fd_, p, chunk);
      if (done < 0) {
        if (errno == EINTR) continue;
        io_fail("write", path_, errno);
      }
      p += done;
      n -= static_cast<uint64_t>(done);
      written_ += static_cast<uint64_t>(done);
    }
  }

  void pad_to(uint64_t offset) {
    static const uint8_t kZeros[4096] = {};
    while (written_ < offset) write(kZeros, std::min<uint64_t>(offset - written_, sizeof kZeros));
  }

  void close() {
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) io_fail("write", path_, errno);
  }

  uint64_t written() const { return written_; }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t written_ = 0;
};

}  // namespace

std::vector<uint8_t> serialize(const Graph& graph, const SerializeOptions& options) {
  Encoded e = encode(graph, options);
  uint64_t size = e.file_size();
  if (size > SIZE_MAX / 2) fail(Code::kResourceExhausted, "a serialized graph of ", size, " bytes does not fit in memory");
  std::vector<uint8_t> out(static_cast<size_t>(size), 0);
  e.encode_prefix(out.data());
  for (const Blob& b : e.blobs)
    if (!b.bytes.empty()) std::memcpy(out.data() + e.header.data_offset + b.offset, b.bytes.data(), b.bytes.size());
  return out;
}

void save(const Graph& graph, const std::string& path, const SerializeOptions& options) {
  Encoded e = encode(graph, options);
  std::string tmp = path + ".tmp";
  try {
    FileWriter file(tmp);
    std::vector<uint8_t> prefix(kHeaderSize + e.flatbuffer.size());
    e.encode_prefix(prefix.data());
    file.write(prefix.data(), prefix.size());
    file.pad_to(e.header.data_offset);
    for (const Blob& b : e.blobs) {  // in offset order
      file.pad_to(e.header.data_offset + b.offset);
      file.write(b.bytes.data(), b.bytes.size());
    }
    file.pad_to(e.file_size());
    file.close();
    if (std::rename(tmp.c_str(), path.c_str()) != 0) io_fail("rename '" + tmp + "' to", path, errno);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace maxc
