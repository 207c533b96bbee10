// TfIdfVectorizer over an integer pool, composed from our graph ops. The pool is an attribute,
// so the n-gram matching is unrolled at import: for each gram length n and each token place
// k, hits_k = (X[..., :, None] == column k of the length-n pool) as 0/1 floats [N, C, G_n];
// an n-gram with skip distance d starts at p when hits_k[p + k*d] holds for every k, so the
// product of the hits slices shifted by k*d, summed over positions, is its count. A constant
// one-hot matrix then carries each n-gram's count to its output coordinate (several n-grams
// may share one), and the mode turns counts into TF, IDF or TF-IDF values.
//
// As ONNX's reference (and onnxruntime) count: unigrams once, whatever max_skip_count;
// longer n-grams once per skip distance 1 .. max_skip_count + 1; an n-gram repeated in the
// pool counts only at its last occurrence's coordinate; weights are read per output
// coordinate. String pools and inputs are refused.
#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

constexpr int64_t kOpen = INT64_MAX;  // slice_tensor's open bound

enum class Mode { kTf, kIdf, kTfIdf };

// The distinct n-grams of one length in [min_gram_length, max_gram_length].
// The n-grams are matched once per skip distance, each match a few ops.
constexpr int64_t kMaxSkipCount = 1024;

struct Grams {
  int64_t n = 0;
  std::vector<std::vector<int64_t>> tokens;  // one entry per n-gram, n tokens each
  std::vector<int64_t> coordinates;          // parallel to tokens
};

struct TfIdfSpec {
  Mode mode = Mode::kTf;
  int64_t max_skip = 0;
  int64_t output_size = 0;
  std::vector<Grams> grams;
  std::optional<std::vector<float>> weights;
};

int64_t required_int(NodeContext& c, std::string_view name) {
  if (!c.attr(name)) c.invalid("attribute '", name, "' is required");
  return c.attr_int(name, 0);
}

Mode read_mode(NodeContext& c) {
  if (!c.attr("mode")) c.invalid("attribute 'mode' is required");
  const std::string mode = c.attr_string("mode", "");
  if (mode == "TF") return Mode::kTf;
  if (mode == "IDF") return Mode::kIdf;
  if (mode == "TFIDF") return Mode::kTfIdf;
  c.invalid("attribute 'mode' is \"", mode, "\"; expected \"TF\", \"IDF\" or \"TFIDF\"");
}

// ngram_counts is CSR-like: entry i is where the (i+1)-grams start in the pool.
void check_ngram_counts(NodeContext& c, const std::vector<int64_t>& counts, size_t pool_size) {
  if (counts.empty()) c.invalid("attribute 'ngram_counts' is empty");
  int64_t prev = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool_size);
    if (counts[i] < prev || counts[i] > end || end > static_cast<int64_t>(pool_size))
      c.invalid("attribute 'ngram_counts' has ", counts[i], " at entry ", i,
                "; its entries must be non-decreasing starts within the pool of ", pool_size, " items");
    if ((end - counts[i]) % static_cast<int64_t>(i + 1) != 0)
      c.invalid("the pool holds ", end - counts[i], " items for ", i + 1, "-grams, not a multiple of ", i + 1);
    prev = counts[i];
  }
}

// Splits the pool into its n-grams by length; each n-gram gets the next ngram_indexes entry,
// and lengths outside [min_len, max_len] keep their entries but are not matched.
std::vector<Grams> split_pool(NodeContext& c, const std::vector<int64_t>& pool, const std::vector<int64_t>& counts,
                              const std::vector<int64_t>& indexes, int64_t min_len, int64_t max_len) {
  std::vector<Grams> out;
  size_t id = 0;
  for (size_t level = 0; level < counts.size(); ++level) {
    const int64_t n = static_cast<int64_t>(level) + 1;
    const size_t begin = static_cast<size_t>(counts[level]);
    const size_t end = level + 1 < counts.size() ? static_cast<size_t>(counts[level + 1]) : pool.size();
    // Ordered by tokens, a later duplicate overwriting an earlier one's coordinate.
    std::map<std::vector<int64_t>, int64_t> last;
    for (size_t at = begin; at < end; at += static_cast<size_t>(n), ++id) {
      if (id >= indexes.size())
        c.invalid("attribute 'ngram_indexes' has ", indexes.size(), " entries, fewer than the pool's n-grams");
      if (n >= min_len && n <= max_len) last[{pool.begin() + at, pool.begin() + at + n}] = indexes[id];
    }
    if (last.empty()) continue;
    Grams g;
    g.n = n;
    for (auto& [tokens, coordinate] : last) {
      g.tokens.push_back(tokens);
      g.coordinates.push_back(coordinate);
    }
    out.push_back(std::move(g));
  }
  if (id != indexes.size())
    c.invalid("attribute 'ngram_indexes' has ", indexes.size(), " entries but the pool holds ", id, " n-grams");
  return out;
}

void check_weights(NodeContext& c, const std::vector<float>& weights, size_t num_indexes, int64_t output_size) {
  if (weights.size() != num_indexes)
    c.invalid("attribute 'weights' has ", weights.size(), " entries; it must have one per n-gram (", num_indexes, ")");
  // Weights are read per output coordinate (as ONNX's reference and onnxruntime do).
  if (static_cast<int64_t>(weights.size()) < output_size)
    c.invalid("attribute 'weights' has ", weights.size(), " entries but the output has ", output_size,
              " coordinates, each weighted by its entry");
}

TfIdfSpec read_spec(NodeContext& c) {
  TfIdfSpec s;
  s.mode = read_mode(c);
  const int64_t min_len = required_int(c, "min_gram_length");
  const int64_t max_len = required_int(c, "max_gram_length");
  s.max_skip = required_int(c, "max_skip_count");
  if (min_len < 1 || max_len < min_len)
    c.invalid("gram lengths min ", min_len, ", max ", max_len, ": need 1 <= min_gram_length <= max_gram_length");
  if (s.max_skip < 0) c.invalid("attribute 'max_skip_count' is ", s.max_skip, "; it must be >= 0");
  if (s.max_skip > kMaxSkipCount)
    c.exhausted("attribute 'max_skip_count' is ", s.max_skip, " (one window per skip distance, at most ", kMaxSkipCount,
                ")");
  if (!c.attr("pool_int64s")) c.invalid("one of the attributes 'pool_int64s' and 'pool_strings' is required");
  const std::vector<int64_t> pool = c.required_attr_ints("pool_int64s");
  const std::vector<int64_t> counts = c.required_attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = c.required_attr_ints("ngram_indexes");
  check_ngram_counts(c, counts, pool.size());
  if (indexes.empty()) c.invalid("attribute 'ngram_indexes' is empty");
  for (int64_t i : indexes) {
    if (i < 0) c.invalid("attribute 'ngram_indexes' has the negative coordinate ", i);
    if (i >= kMaxBuiltElements) c.exhausted("attribute 'ngram_indexes' has the coordinate ", i, " (the output's size)");
    s.output_size = std::max(s.output_size, i + 1);
  }
  s.grams = split_pool(c, pool, counts, indexes, min_len, max_len);
  s.weights = c.attr_floats("weights");
  if (s.weights) check_weights(c, *s.weights, indexes.size(), s.output_size);
  return s;
}

// x[:, start:start+len, :] of a rank-3 value.
ValueId window(NodeContext& c, ValueId x, int64_t start, const Dim& len) {
  return c.op("slice_tensor", {x}, {{"starts", std::vector<Dim>{Dim(kOpen), Dim(start)}},
                                    {"stops", std::vector<Dim>{Dim(kOpen), Dim(start) + len}}});
}

// 0/1 floats [N, C + pad, G]: whether X[:, p] is token k of each n-gram, false in the padding
// (which lets a window run past the end of a row of symbolic length).
ValueId token_hits(NodeContext& c, ValueId x3, const Grams& g, size_t k, int64_t pad) {
  std::vector<Dim> column;
  for (const auto& t : g.tokens) column.push_back(Dim(t[k]));
  const int64_t size = static_cast<int64_t>(column.size());
  const ValueId tokens = c.constant(KnownValue::from_dims(DType::kInt64, {size}, std::move(column)));
  const ValueId hits = c.cast(c.op("equal", {x3, tokens}), DType::kFloat32);
  if (pad == 0) return hits;
  return c.op("pad", {hits}, {{"paddings", std::vector<int64_t>{0, 0, 0, pad, 0, 0}}, {"value", 0.0}});
}

// The counts [N, G] of g's n-grams in the rows of x3 [N, C, 1], over every skip distance
// that applies; nullopt when no n-gram of this length fits in a row of static length.
std::optional<ValueId> count_grams(NodeContext& c, ValueId x3, const Grams& g, int64_t max_skip) {
  const std::vector<Dim> dims = c.type_of(x3).dims;
  const Dim& len = dims[1];
  const int64_t distances = g.n == 1 ? 1 : max_skip + 1;
  // A static row shorter than an n-gram's span has no window for it: nothing to match.
  auto fits = [&](int64_t d) { return !len.is_static() || (g.n - 1) * d < len.static_value(); };
  if (!fits(1)) return std::nullopt;
  std::vector<ValueId> hits;
  for (size_t k = 0; k < static_cast<size_t>(g.n); ++k) hits.push_back(token_hits(c, x3, g, k, (g.n - 1) * distances));
  std::optional<ValueId> total;
  for (int64_t d = 1; d <= distances && fits(d); ++d) {
    ValueId all = window(c, hits[0], 0, len);
    for (size_t k = 1; k < hits.size(); ++k)
      all = c.op("mul", {all, window(c, hits[k], static_cast<int64_t>(k) * d, len)});
    const ValueId per_row = c.op("sum", {all}, {{"axis", int64_t{1}}});
    total = total ? c.op("add", {*total, per_row}) : per_row;
  }
  return c.reshape(*total, {dims[0], Dim(static_cast<int64_t>(g.tokens.size()))});
}

// The counts [N, output_size] of x2 [N, C]: each counted n-gram at its coordinate.
ValueId count_coordinates(NodeContext& c, ValueId x2, const TfIdfSpec& s) {
  const ValueId x3 = c.op("unsqueeze", {c.cast(x2, DType::kInt64)}, {{"axis", int64_t{-1}}});
  std::vector<ValueId> counts;
  std::vector<int64_t> coordinates;
  for (const Grams& g : s.grams) {
    std::optional<ValueId> n_counts = count_grams(c, x3, g, s.max_skip);
    if (!n_counts) continue;
    counts.push_back(*n_counts);
    coordinates.insert(coordinates.end(), g.coordinates.begin(), g.coordinates.end());
  }
  const Dim rows = c.type_of(x2).dims[0];
  if (counts.empty())
    return c.op("broadcast_to", {c.scalar(DType::kFloat32, 0)}, {{"shape", std::vector<Dim>{rows, s.output_size}}});
  const ValueId all = counts.size() == 1 ? counts[0] : c.op("concat", counts, {{"axis", int64_t{1}}});
  const int64_t total = static_cast<int64_t>(coordinates.size());
  std::vector<double> placement(
      static_cast<size_t>(bounded_elements(c, {total, s.output_size}, "the placement of the n-gram counts")), 0.0);
  for (int64_t i = 0; i < total; ++i) placement[static_cast<size_t>(i * s.output_size + coordinates[i])] = 1.0;
  const ValueId to_output = c.constant(KnownValue::from_doubles(DType::kFloat32, {total, s.output_size}, placement));
  return c.op("matmul", {all, to_output});
}

ValueId weighted(NodeContext& c, ValueId counts, const TfIdfSpec& s) {
  if (s.mode == Mode::kTf) return counts;
  ValueId y = counts;
  if (s.mode == Mode::kIdf) y = c.cast(c.op("greater", {counts, c.scalar(DType::kFloat32, 0)}), DType::kFloat32);
  if (!s.weights) return y;
  const std::vector<double> w(s.weights->begin(), s.weights->begin() + s.output_size);
  return c.op("mul", {y, c.constant(KnownValue::from_doubles(DType::kFloat32, {s.output_size}, w))});
}

void import_tfidf_vectorizer(NodeContext& c) {
  if (c.attr("pool_strings")) c.unsupported("pool_strings: strings are not supported (integer pools only)");
  const DType dt = c.dtype(0);
  if (dt != DType::kInt32 && dt != DType::kInt64)
    c.invalid("X is ", dtype_name(dt), "; it must be int32 or int64 (or string, which max_c does not support)");
  const TfIdfSpec s = read_spec(c);
  const std::vector<Dim> dims = c.type(0).dims;
  if (dims.size() != 1 && dims.size() != 2)
    c.invalid("X must have rank 1 ([C]) or 2 ([N, C]), got rank ", dims.size());
  const ValueId x2 = dims.size() == 1 ? c.reshape(c.input(0), {Dim(1), dims[0]}) : c.input(0);
  ValueId y = weighted(c, count_coordinates(c, x2, s), s);
  if (dims.size() == 1) y = c.reshape(y, {Dim(s.output_size)});
  c.set_output(0, y);
}

}  // namespace

void register_tfidf_importers(ImportTable& t) { t["TfIdfVectorizer"] = import_tfidf_vectorizer; }

}  // namespace maxc::onnx
