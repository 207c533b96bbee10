// Truncated, corrupt and hostile MAXG files: each must fail with DATA_LOSS or
// INVALID_ARGUMENT, never crash, hang or allocate far beyond the file's size.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <random>

#include <flatbuffers/flatbuffers.h>

#include "serialize/graph_generated.h"
#include "test_helpers.h"

namespace maxc::testing {
namespace {

// A small graph touching most of the format: symbolic dims, attributes of several kinds,
// inline and data-segment constants, a weight, a subgraph.
Graph sample_graph() {
  Graph g("sample");
  ValueId x = g.add_input("x", f32({"batch", 4}));
  ValueId e = g.add_op("exp", {x})[0];
  ValueId c = g.add_constant(Constant::copy_of(f32({4}), pattern(16, 5)));
  ValueId big = g.add_constant(Constant::copy_of(f32({2, 1024}), pattern(8192, 6)));
  ValueId big2 = g.add_constant(Constant::copy_of(f32({1024}), pattern(4096, 7)));
  ValueId w = g.add_weight("w", f32({"batch", 4}));
  ValueId s = g.add_op("add", {e, c})[0];
  ValueId t = g.add_op("mul", {s, w})[0];
  ValueId cl = g.add_op("clamp", {t}, Attrs{{"min", -1.0}, {"max", 1.0}})[0];
  ValueId r = g.add_op("cast", {cl}, Attrs{{"dtype", DType::kFloat16}})[0];
  g.set_outputs({{"y", r}, {"big", big}, {"big2", big2}});
  Graph sub("sub");
  ValueId a = sub.add_input("a", f32({"n"}));
  sub.set_outputs({{"b", sub.add_op("relu", {a})[0]}});
  g.add_subgraph(sub);
  return g;
}

bool clean(Code c) { return c == Code::kOk || c == Code::kDataLoss || c == Code::kInvalidArgument; }

TEST(SerializeHostile, EveryPrefixIsDataLoss) {
  std::vector<uint8_t> bytes = serialize(sample_graph());
  ASSERT_NO_THROW(deserialize(bytes));
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    ASSERT_EQ(code_name(error_code([&] { deserialize(prefix); })), std::string("DATA_LOSS")) << "prefix of " << n;
  }
  expect_error([&] { deserialize(std::span(bytes).first(40)); }, Code::kDataLoss, {"truncated", "offset 32"});
}

// Prefixes of the flatbuffer behind a header that agrees with them: the Verifier's turn.
TEST(SerializeHostile, EveryFlatbufferPrefixBehindAConsistentHeaderIsDataLoss) {
  std::vector<uint8_t> bytes = serialize(sample_graph(), SerializeOptions{{}, SIZE_MAX});  // all inline
  maxg::Header h = header_of(bytes);
  for (uint64_t n = 0; n < h.flatbuffer_size; ++n) {
    maxg::Header cut{maxg::kFormatVersion, n, maxg::align_up(32 + n, 64), 0};
    std::vector<uint8_t> file(cut.data_offset, 0);
    set_header(file, cut);
    std::memcpy(file.data() + 32, bytes.data() + 32, n);
    Code c = error_code([&] { deserialize(file); });
    ASSERT_EQ(code_name(c), std::string("DATA_LOSS")) << "flatbuffer prefix of " << n;
  }
}

TEST(SerializeHostile, HeaderFields) {
  std::vector<uint8_t> good = serialize(sample_graph());
  maxg::Header h = header_of(good);
  auto with = [&](auto&& edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    return f;
  };
  expect_error([&] { deserialize(with([](auto& f) { f[0] = 'N'; })); }, Code::kDataLoss, {"bad magic", "offset 0"});
  expect_error([&] { deserialize(with([](auto& f) { f[4] = 2; })); }, Code::kDataLoss, {"format version 2", "offset 4"});
  auto edit_header = [&](auto&& change) {
    return with([&](auto& f) {
      maxg::Header x = h;
      change(x);
      set_header(f, x);
    });
  };
  expect_error([&] { deserialize(edit_header([](auto& x) { x.flatbuffer_size = UINT64_MAX; })); }, Code::kDataLoss,
               {"truncated", "offset 8"});
  expect_error([&] { deserialize(edit_header([](auto& x) { x.data_offset += 1; })); }, Code::kDataLoss, {"offset 16"});
  expect_error([&] { deserialize(edit_header([](auto& x) { x.data_offset = UINT64_MAX - 63; })); }, Code::kDataLoss, {});
  expect_error([&] { deserialize(edit_header([](auto& x) { x.data_size = UINT64_MAX; })); }, Code::kDataLoss, {"truncated"});
  expect_error([&] { deserialize(edit_header([](auto& x) { x.data_size -= 1; })); }, Code::kDataLoss, {"after the data segment"});
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  expect_error([&] { deserialize(longer); }, Code::kDataLoss, {"1 unexpected bytes"});
  // The file identifier inside the flatbuffer.
  expect_error([&] { deserialize(with([](auto& f) { f[36] = 'X'; })); }, Code::kDataLoss, {"verification"});
}

// Seeded random byte flips, mostly in the header and the flatbuffer: every one loads or fails
// cleanly. Runs under ASan/UBSan in the sanitizer build.
TEST(SerializeHostile, RandomByteFlips) {
  std::vector<uint8_t> good = serialize(sample_graph());
  maxg::Header h = header_of(good);
  size_t structure = static_cast<size_t>(32 + h.flatbuffer_size);
  std::mt19937_64 rng(0x4d415847);
  auto start = std::chrono::steady_clock::now();
  int loaded = 0, failed = 0;
  std::vector<uint8_t> file;
  for (int iter = 0; iter < 4000; ++iter) {
    file = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) {
      size_t at = rng() % 16 == 0 ? rng() % file.size() : rng() % structure;
      switch (rng() % 4) {
        case 0: file[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: file[at] = static_cast<uint8_t>(rng()); break;
        case 2: file[at] = 0xff; break;
        default: file[at] = 0; break;
      }
    }
    try {
      Graph g = deserialize(file);
      ++loaded;
      (void)serialize(g);  // whatever loaded is a usable graph
    } catch (const Error& e) {
      ASSERT_TRUE(clean(e.code())) << "iteration " << iter << ": " << code_name(e.code()) << ": " << e.what();
      ++failed;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(failed, 1000);
  EXPECT_GT(loaded, 10);
  EXPECT_LT(seconds, 20.0);
  std::printf("byte flips: %d loaded, %d failed cleanly, %.2f s\n", loaded, failed, seconds);
}

// ---- files built field by field -----------------------------------------------------------

// The header, the flatbuffer and padding: a file whose flatbuffer a test wrote itself.
std::vector<uint8_t> wrap(flatbuffers::FlatBufferBuilder& fbb) {
  maxg::Header h{maxg::kFormatVersion, fbb.GetSize(), maxg::align_up(32 + fbb.GetSize(), 64), 0};
  std::vector<uint8_t> file(h.data_offset, 0);
  set_header(file, h);
  std::memcpy(file.data() + 32, fbb.GetBufferPointer(), fbb.GetSize());
  return file;
}

// One graph with one input of type `type`, plus `extra` graphs and `subgraphs` for graph 0.
std::vector<uint8_t> one_input_file(flatbuffers::FlatBufferBuilder& fbb, flatbuffers::Offset<fb::TensorType> type,
                                    std::vector<uint32_t> subgraphs = {}, int extra_graphs = 0) {
  auto values = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::TensorType>>{type});
  auto inputs = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::NamedValue>>{
      fb::CreateNamedValue(fbb, fbb.CreateString("x"), 0)});
  std::vector<flatbuffers::Offset<fb::Graph>> graphs{
      fb::CreateGraph(fbb, fbb.CreateString("g"), fbb.CreateVector(subgraphs), values, inputs)};
  for (int i = 0; i < extra_graphs; ++i) graphs.push_back(fb::CreateGraph(fbb, fbb.CreateString("s")));
  fb::FinishFileBuffer(fbb, fb::CreateFile(fbb, 1, 0, fbb.CreateVector(graphs)));
  return wrap(fbb);
}

flatbuffers::Offset<fb::TensorType> symbolic_type(flatbuffers::FlatBufferBuilder& fbb, const std::string& dim) {
  auto dims = fbb.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{fbb.CreateString(dim)});
  return fb::CreateTensorType(fbb, static_cast<int32_t>(DType::kFloat32), 0, dims);
}

TEST(SerializeHostile, HandBuiltFileLoads) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<uint8_t> file = one_input_file(fbb, symbolic_type(fbb, "n + 1"));
  Graph g = deserialize(file);
  EXPECT_EQ(g.type(0), f32({Dim::parse("n + 1")}));
}

TEST(SerializeHostile, ExplodingDimExpressionIsRejectedQuickly) {
  std::string product;  // (a0 + b0) * (a1 + b1) * ... expands to 2^40 terms
  for (int i = 0; i < 40; ++i) product += str_cat(i ? " * " : "", "(a", i, " + b", i, ")");
  std::string deep(20000, '(');
  deep += "x" + std::string(20000, ')');
  std::string negations(20000, '-');
  negations += "x";
  for (const std::string& dim : {product, deep, negations, std::string(5000, 'x')}) {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<uint8_t> file = one_input_file(fbb, symbolic_type(fbb, dim));
    auto start = std::chrono::steady_clock::now();
    expect_error([&] { deserialize(file); }, Code::kInvalidArgument, {});
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  }
}

// Every attribute kind decodes; an op that does not take them rejects them by name.
TEST(SerializeHostile, EveryAttributeKindDecodes) {
  flatbuffers::FlatBufferBuilder fbb;
  auto attr = [&](const char* name, fb::AttrValue kind, flatbuffers::Offset<void> v) {
    return fb::CreateAttr(fbb, fbb.CreateString(name), kind, v);
  };
  auto dims = fbb.CreateVector(std::vector<flatbuffers::Offset<flatbuffers::String>>{fbb.CreateString("n // 2")});
  std::vector<flatbuffers::Offset<fb::Attr>> attrs{
      attr("a_int", fb::AttrValue::IntAttr, fb::CreateIntAttr(fbb, 3).Union()),
      attr("b_float", fb::AttrValue::FloatAttr, fb::CreateFloatAttr(fbb, 0.5).Union()),
      attr("c_string", fb::AttrValue::StringAttr, fb::CreateStringAttr(fbb, fbb.CreateString("s")).Union()),
      attr("d_dtype", fb::AttrValue::DTypeAttr, fb::CreateDTypeAttr(fbb, 81).Union()),
      attr("e_ints", fb::AttrValue::IntsAttr, fb::CreateIntsAttr(fbb, fbb.CreateVector(std::vector<int64_t>{1, 2})).Union()),
      attr("f_floats", fb::AttrValue::FloatsAttr, fb::CreateFloatsAttr(fbb, fbb.CreateVector(std::vector<double>{1.5})).Union()),
      attr("g_dims", fb::AttrValue::DimsAttr, fb::CreateDimsAttr(fbb, 0, dims).Union()),
      attr("h_graph", fb::AttrValue::GraphAttr, fb::CreateGraphAttr(fbb, 0).Union()),
      attr("i_bool", fb::AttrValue::BoolAttr, fb::CreateBoolAttr(fbb, true).Union()),
      attr("j_device", fb::AttrValue::DeviceAttr, fb::CreateDeviceAttr(fbb, 1, 2).Union()),
  };
  auto ops = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Op>>{fb::CreateOp(
      fbb, 0, fbb.CreateVector(std::vector<uint32_t>{0}), fbb.CreateVector(std::vector<uint32_t>{1}), fbb.CreateVector(attrs))});
  auto f = fb::CreateTensorType(fbb, 81, fbb.CreateVector(std::vector<int64_t>{2}));
  auto values = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::TensorType>>{f, f});
  auto inputs = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::NamedValue>>{
      fb::CreateNamedValue(fbb, fbb.CreateString("x"), 0)});
  auto graphs = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Graph>>{
      fb::CreateGraph(fbb, fbb.CreateString("g"), 0, values, inputs, ops)});
  auto opcodes = fbb.CreateVector(std::vector<flatbuffers::Offset<fb::OpCode>>{
      fb::CreateOpCode(fbb, fbb.CreateString("exp"), 1)});
  fb::FinishFileBuffer(fbb, fb::CreateFile(fbb, 1, opcodes, graphs));
  std::vector<uint8_t> file = wrap(fbb);
  expect_error([&] { deserialize(file); }, Code::kInvalidArgument, {"op 0 'exp'", "a_int"});
}

// Tables and vectors shared many times over would make a small file expand into a huge graph.
TEST(SerializeHostile, SharedTablesDoNotAmplify) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> many_dims(20000, 1);
  auto type = fb::CreateTensorType(fbb, static_cast<int32_t>(DType::kFloat32), fbb.CreateVector(many_dims));
  std::vector<flatbuffers::Offset<fb::TensorType>> values(100000, type);  // 2e9 dims if expanded
  auto values_vec = fbb.CreateVector(values);
  std::vector<flatbuffers::Offset<fb::Graph>> graphs{
      fb::CreateGraph(fbb, fbb.CreateString("g"), 0, values_vec)};
  fb::FinishFileBuffer(fbb, fb::CreateFile(fbb, 1, 0, fbb.CreateVector(graphs)));
  std::vector<uint8_t> file = wrap(fbb);
  auto start = std::chrono::steady_clock::now();
  expect_error([&] { deserialize(file); }, Code::kDataLoss, {"references more data than it holds"});
  // A hang guard, not a timing: expanding 2e9 dims would take minutes; a refusal takes well
  // under a second optimized and about 2 s in the unoptimized ASan tree.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
}

TEST(SerializeHostile, HugeCountsAreCaughtBeforeAllocating) {
  std::vector<uint8_t> good = serialize(sample_graph());
  // Patch the length of the first value's dims vector to 2^31 - 1.
  std::vector<uint8_t> file = good;
  auto* root = fb::GetMutableFile(file.data() + 32);
  auto* type = root->mutable_graphs()->GetMutableObject(0)->mutable_values()->GetMutableObject(0);
  auto* dims = type->mutable_dims();
  ASSERT_NE(dims, nullptr);
  uint8_t* length = reinterpret_cast<uint8_t*>(dims);  // a vector starts with its uint32 length
  maxg::store_le(length, 0x7fffffff, 4);
  expect_error([&] { deserialize(file); }, Code::kDataLoss, {"verification"});
  // And the count of graphs.
  file = good;
  root = fb::GetMutableFile(file.data() + 32);
  maxg::store_le(reinterpret_cast<uint8_t*>(root->mutable_graphs()), 0xfffffff0u, 4);
  expect_error([&] { deserialize(file); }, Code::kDataLoss, {"verification"});
}

TEST(SerializeHostile, SemanticErrorsAreInvalidArgument) {
  std::vector<uint8_t> good = serialize(sample_graph());
  auto patched = [&](auto&& edit) {
    std::vector<uint8_t> f = good;
    edit(fb::GetMutableFile(f.data() + 32));
    return f;
  };
  // A recorded type that does not match what the op infers.
  expect_error([&] {
    deserialize(patched([](fb::File* root) {
      auto* values = root->mutable_graphs()->GetMutableObject(0)->mutable_values();
      ASSERT_TRUE(values->GetMutableObject(1)->mutate_dtype(static_cast<int32_t>(DType::kFloat64)));
    }));
  }, Code::kInvalidArgument, {"recorded as", "float64", "op 0 'exp'"});
  // An op this build does not know.
  expect_error([&] {
    deserialize(patched([](fb::File* root) {
      for (const fb::OpCode* code : *root->opcodes())
        if (code->name()->str() == "exp") const_cast<char*>(code->name()->c_str())[2] = 'q';
    }));
  }, Code::kInvalidArgument, {"exq"});
  // An op code index out of range.
  expect_error([&] {
    deserialize(patched([](fb::File* root) {
      auto* ops = root->mutable_graphs()->GetMutableObject(0)->mutable_ops();
      ASSERT_TRUE(ops->GetMutableObject(0)->mutate_opcode(999));
    }));
  }, Code::kDataLoss, {"op code index 999"});
  // An op input that does not exist.
  expect_error([&] {
    deserialize(patched([](fb::File* root) {
      auto* ops = root->mutable_graphs()->GetMutableObject(0)->mutable_ops();
      ops->GetMutableObject(0)->mutable_inputs()->Mutate(0, 12345);
    }));
  }, Code::kInvalidArgument, {"%12345"});
  // A blob out of range, misaligned, or overlapping.
  auto blob = [&](uint64_t offset, uint64_t size) {
    return patched([&](fb::File* root) {
      // The second blob: its offset (8192) is stored, so it can be changed in place.
      auto* c = root->mutable_graphs()->GetMutableObject(0)->mutable_constants()->GetMutableObject(2);
      ASSERT_EQ(c->location(), fb::DataLocation::Segment);
      ASSERT_TRUE(c->mutate_data_offset(offset));
      ASSERT_TRUE(c->mutate_data_size(size));
    });
  };
  expect_error([&] { deserialize(blob(8192, UINT64_MAX)); }, Code::kDataLoss, {"run past the data segment"});
  expect_error([&] { deserialize(blob(UINT64_MAX - 63, 64)); }, Code::kDataLoss, {"run past the data segment"});
  expect_error([&] { deserialize(blob(8193, 4096)); }, Code::kDataLoss, {"aligned"});
  expect_error([&] { deserialize(blob(64, 4096)); }, Code::kDataLoss, {"overlap"});
  expect_error([&] { deserialize(blob(8192, 8)); }, Code::kInvalidArgument, {"4096 bytes, got 8"});
  // A graph that lists itself as its subgraph.
  expect_error([&] {
    deserialize(patched([](fb::File* root) {
      root->mutable_graphs()->GetMutableObject(0)->mutable_subgraphs()->Mutate(0, 0);
    }));
  }, Code::kDataLoss, {"subgraph"});
}

TEST(SerializeHostile, SubgraphTreeAndDepth) {
  {  // graph 1 is nobody's subgraph
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<uint8_t> file = one_input_file(fbb, symbolic_type(fbb, "n"), {}, 1);
    expect_error([&] { deserialize(file); }, Code::kInvalidArgument, {"graph 1 is not a subgraph"});
  }
  {  // a chain nested 200 deep
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<fb::Graph>> graphs;
    for (uint32_t i = 0; i < 200; ++i)
      graphs.push_back(fb::CreateGraph(fbb, fbb.CreateString("g"), fbb.CreateVector(std::vector<uint32_t>{i + 1})));
    graphs.push_back(fb::CreateGraph(fbb, fbb.CreateString("leaf")));
    fb::FinishFileBuffer(fbb, fb::CreateFile(fbb, 1, 0, fbb.CreateVector(graphs)));
    std::vector<uint8_t> file = wrap(fbb);
    expect_error([&] { deserialize(file); }, Code::kInvalidArgument, {"nest deeper"});
  }
}

// A data segment past 2 GiB: the second blob of a real file is moved to offset 3 GiB of a
// sparse file, which then loads, and its bytes read back through the mapping.
TEST(SerializeHostile, DataSegmentPastTwoGiB) {
  Graph g("big");
  std::vector<uint8_t> a = pattern(8192, 1), b = pattern(8192, 2);
  ValueId ca = g.add_constant(Constant::copy_of(tensor(DType::kUInt8, {8192}), a));
  ValueId cb = g.add_constant(Constant::copy_of(tensor(DType::kUInt8, {8192}), b));
  g.set_outputs({{"a", ca}, {"b", cb}});
  std::vector<uint8_t> file = serialize(g);
  maxg::Header h = header_of(file);

  constexpr uint64_t kFar = uint64_t{3} << 30;
  auto* c = fb::GetMutableFile(file.data() + 32)->mutable_graphs()->GetMutableObject(0)->mutable_constants()->GetMutableObject(1);
  ASSERT_EQ(c->data_offset(), 8192u);
  ASSERT_TRUE(c->mutate_data_offset(kFar));
  h.data_size = kFar + b.size();
  set_header(file, h);
  ASSERT_GT(h.data_offset + kFar, uint64_t{1} << 31);

  TempPath path("past_2gib.maxg");
  int fd = ::open(path.str().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, file.data(), h.data_offset + a.size(), 0), static_cast<ssize_t>(h.data_offset + a.size()));
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(h.data_offset + h.data_size)), 0);
  ASSERT_EQ(::pwrite(fd, b.data(), b.size(), static_cast<off_t>(h.data_offset + kFar)), static_cast<ssize_t>(b.size()));
  struct stat st;
  ASSERT_EQ(::fstat(fd, &st), 0);
  ::close(fd);
  ASSERT_EQ(static_cast<uint64_t>(st.st_size), h.data_offset + kFar + b.size());
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{64} << 20) << "the file should be sparse";

  Graph loaded = load(path.str());
  ASSERT_EQ(loaded.constants().size(), 2u);
  const Constant& far = loaded.constants()[1];
  ASSERT_EQ(far.size, b.size());
  EXPECT_EQ(0, std::memcmp(far.data.get(), b.data(), b.size()));
  EXPECT_EQ(far.data.get()[b.size() - 1], b.back());
  EXPECT_EQ(0, std::memcmp(loaded.constants()[0].data.get(), a.data(), a.size()));
  // Written again, the blobs are packed: the original file.
  EXPECT_EQ(serialize(loaded), serialize(g));
}

}  // namespace
}  // namespace maxc::testing
