// Einsum: each operand's repeated labels become a diagonal (a select with an identity mask,
// then a sum), labels no one else needs are summed out, and operands are contracted pairwise
// as one batched matmul: A permuted to [batch, left, contracted] and B to [batch, contracted,
// right], the groups merged into single axes. A final permute gives the output's order.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "onnx/node_context.h"
#include "onnx/size_limits.h"

namespace maxc::onnx {
namespace {

using Labels = std::vector<int>;  // one per axis: a letter's code, or kEllipsis + k

constexpr int kEllipsis = 1000;

struct Term {
  ValueId v;
  Labels labels;
};

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

// One operand's subscripts; "..." stands for `ellipsis` axes no letter names, right-aligned
// with the other operands' (labels kEllipsis + ellipsis_rank - ellipsis .. ellipsis_rank - 1).
Labels parse_subscripts(NodeContext& c, const std::string& s, int64_t ellipsis, int64_t ellipsis_rank) {
  Labels out;
  size_t dots = s.find("...");
  for (size_t i = 0; i < s.size(); ++i) {
    if (i == dots) {
      for (int64_t k = ellipsis_rank - ellipsis; k < ellipsis_rank; ++k) out.push_back(kEllipsis + static_cast<int>(k));
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(s[i]))) {
      out.push_back(s[i]);
    } else {
      c.invalid("equation has the character '", s[i], "'");
    }
  }
  return out;
}

// Axes the "..." of subscripts `s` stands for in an operand of rank `rank`.
int64_t ellipsis_axes(const std::string& s, int64_t rank) {
  if (s.find("...") == std::string::npos) return 0;
  return std::max<int64_t>(rank - static_cast<int64_t>(s.size() - 3), 0);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts(1);
  for (char ch : s) {
    if (ch == sep) parts.emplace_back();
    else parts.back() += ch;
  }
  return parts;
}

// Without "->": the ellipsis axes, then the letters used once, in alphabetical order.
Labels implicit_output(const std::vector<Labels>& inputs, int64_t ellipsis_rank) {
  Labels out;
  std::map<int, int> count;
  for (const Labels& l : inputs)
    for (int x : l) ++count[x];
  for (int k = 0; k < ellipsis_rank; ++k) out.push_back(kEllipsis + k);
  for (auto [x, n] : count)
    if (x < kEllipsis && n == 1) out.push_back(x);
  return out;
}

Equation parse(NodeContext& c) {
  std::string eq = c.attr_string("equation", "");
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  std::vector<std::string> ins = split(eq.substr(0, arrow), ',');
  if (ins.size() != c.num_inputs())
    c.invalid("equation has ", ins.size(), " operands but the node has ", c.num_inputs(), " inputs");
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < ins.size(); ++i) ellipsis_rank = std::max(ellipsis_rank, ellipsis_axes(ins[i], c.rank(i)));
  Equation e;
  for (size_t i = 0; i < ins.size(); ++i) {
    e.inputs.push_back(parse_subscripts(c, ins[i], ellipsis_axes(ins[i], c.rank(i)), ellipsis_rank));
    if (static_cast<int64_t>(e.inputs[i].size()) != c.rank(i))
      c.invalid("subscripts \"", ins[i], "\" name ", e.inputs[i].size(), " axes; input ", i, " has rank ", c.rank(i));
  }
  if (arrow == std::string::npos) {
    e.output = implicit_output(e.inputs, ellipsis_rank);
  } else {
    std::string out = eq.substr(arrow + 2);
    e.output = parse_subscripts(c, out, out.find("...") == std::string::npos ? 0 : ellipsis_rank, ellipsis_rank);
  }
  return e;
}

// ---- one operand ----

size_t position(const Labels& l, int x) { return static_cast<size_t>(std::find(l.begin(), l.end(), x) - l.begin()); }

// x[..., i, ..., i, ...] -> x[..., i, ...] for the first repeated label.
bool take_diagonal(NodeContext& c, Term& t) {
  for (size_t p = 0; p < t.labels.size(); ++p)
    for (size_t q = p + 1; q < t.labels.size(); ++q) {
      if (t.labels[p] != t.labels[q]) continue;
      const Dim n = c.type_of(t.v).dims[p];
      if (!n.is_static()) c.unsupported("a diagonal (a repeated label) needs a static dim, got ", n);
      if (c.type_of(t.v).dims[q] != n)
        c.invalid("a repeated label names axes ", p, " and ", q, " of lengths ", n, " and ", c.type_of(t.v).dims[q]);
      int64_t size = n.static_value();
      std::vector<int64_t> shape(t.labels.size(), 1);
      shape[p] = shape[q] = size;
      std::vector<double> eye(static_cast<size_t>(bounded_elements(c, {size, size}, "the diagonal mask")), 0.0);
      for (int64_t i = 0; i < size; ++i) eye[static_cast<size_t>(i * size + i)] = 1;
      ValueId mask = c.constant(KnownValue::from_doubles(DType::kBool, shape, eye));
      ValueId kept = c.op("where", {mask, t.v, c.scalar(c.type_of(t.v).dtype, 0)});
      ValueId summed = c.op("sum", {kept}, {{"axis", static_cast<int64_t>(q)}});
      std::vector<Dim> dims = c.type_of(summed).dims;
      dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(q));
      t.v = c.reshape(summed, dims);
      t.labels.erase(t.labels.begin() + static_cast<std::ptrdiff_t>(q));
      return true;
    }
  return false;
}

// Sums out the labels not in `keep`.
void sum_out(NodeContext& c, Term& t, const std::set<int>& keep) {
  Labels kept;
  std::vector<Dim> dims;
  const std::vector<Dim> in = c.type_of(t.v).dims;
  bool any = false;
  for (size_t a = 0; a < t.labels.size(); ++a) {
    if (keep.count(t.labels[a])) {
      kept.push_back(t.labels[a]);
      dims.push_back(in[a]);
      continue;
    }
    t.v = c.op("sum", {t.v}, {{"axis", static_cast<int64_t>(a)}});
    any = true;
  }
  if (!any) return;
  t.v = c.reshape(t.v, dims);
  t.labels = kept;
}

ValueId permuted(NodeContext& c, const Term& t, const Labels& order) {
  std::vector<int64_t> perm;
  for (int x : order) perm.push_back(static_cast<int64_t>(position(t.labels, x)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? t.v : c.op("permute", {t.v}, {{"dims", perm}});
}

// ---- two operands ----

std::vector<Dim> dims_of(NodeContext& c, const Term& t, const Labels& which) {
  std::vector<Dim> out;
  const std::vector<Dim> d = c.type_of(t.v).dims;
  for (int x : which) out.push_back(d[position(t.labels, x)]);
  return out;
}

// a · b over their shared labels not in `keep`; the result is [batch, left, right].
Term contract(NodeContext& c, const Term& a, const Term& b, const std::set<int>& keep) {
  Labels batch, left, right, inner;
  for (int x : a.labels) {
    bool shared = std::count(b.labels.begin(), b.labels.end(), x) > 0;
    if (!shared) left.push_back(x);
    else if (keep.count(x)) batch.push_back(x);
    else inner.push_back(x);
  }
  for (int x : b.labels)
    if (!std::count(a.labels.begin(), a.labels.end(), x)) right.push_back(x);
  auto cat = [](Labels p, const Labels& q, const Labels& r) {
    p.insert(p.end(), q.begin(), q.end());
    p.insert(p.end(), r.begin(), r.end());
    return p;
  };
  std::vector<Dim> left_dims = dims_of(c, a, left), right_dims = dims_of(c, b, right);
  std::vector<Dim> lhs = dims_of(c, a, batch), rhs = dims_of(c, b, batch);
  lhs.push_back(dims_product(left_dims));
  lhs.push_back(dims_product(dims_of(c, a, inner)));
  rhs.push_back(dims_product(dims_of(c, b, inner)));
  rhs.push_back(dims_product(right_dims));
  ValueId x = c.reshape(permuted(c, a, cat(batch, left, inner)), lhs);
  ValueId y = c.reshape(permuted(c, b, cat(batch, inner, right)), rhs);
  ValueId z = c.op("matmul", {x, c.cast(y, c.type_of(x).dtype)});
  std::vector<Dim> out = c.type_of(z).dims;
  out.resize(batch.size());
  out.insert(out.end(), left_dims.begin(), left_dims.end());
  out.insert(out.end(), right_dims.begin(), right_dims.end());
  return Term{c.reshape(z, out), cat(batch, left, right)};
}

// The labels the output or any operand after `from` still needs.
std::set<int> needed(const Equation& e, const std::vector<Term>& terms, size_t from) {
  std::set<int> s(e.output.begin(), e.output.end());
  for (size_t i = from; i < terms.size(); ++i) s.insert(terms[i].labels.begin(), terms[i].labels.end());
  return s;
}

void import_einsum(NodeContext& c) {
  if (c.num_inputs() == 0) c.invalid("needs at least one input");
  Equation e = parse(c);
  std::vector<Term> terms;
  for (size_t i = 0; i < c.num_inputs(); ++i) terms.push_back({c.input(i), e.inputs[i]});
  for (size_t i = 0; i < terms.size(); ++i) {
    while (take_diagonal(c, terms[i])) {}
    std::set<int> others(e.output.begin(), e.output.end());
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i) others.insert(terms[j].labels.begin(), terms[j].labels.end());
    sum_out(c, terms[i], others);
  }
  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = contract(c, acc, terms[i], needed(e, terms, i + 1));
  for (int x : e.output)
    if (!std::count(acc.labels.begin(), acc.labels.end(), x)) c.invalid("the output names a label no operand has");
  if (acc.labels.size() != e.output.size()) c.invalid("the output repeats a label");
  c.set_output(0, permuted(c, acc, e.output));
}

}  // namespace

void register_einsum_importers(ImportTable& t) { t["Einsum"] = import_einsum; }

}  // namespace maxc::onnx
