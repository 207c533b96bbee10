#include "graph/dim.h"

#include <algorithm>
#include <cctype>
#include <ostream>

#include "base/error.h"

namespace maxc {
namespace {

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(Code::kInvalidArgument, "dim arithmetic overflows int64: ", a, " + ", b);
  return r;
}

int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(Code::kInvalidArgument, "dim arithmetic overflows int64: ", a, " * ", b);
  return r;
}

// Python's //: rounds toward negative infinity, also for negative operands.
int64_t floor_div(int64_t a, int64_t b) {
  if (a == INT64_MIN && b == -1) fail(Code::kInvalidArgument, "dim arithmetic overflows int64: ", a, " // -1");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '_' || std::isalnum(static_cast<unsigned char>(c)); });
}

// True when `sub` is a sub-multiset of `m` (both sorted).
bool contains(const Dim::Monomial& m, const Dim::Monomial& sub) {
  return std::includes(m.begin(), m.end(), sub.begin(), sub.end());
}

Dim::Monomial without(const Dim::Monomial& m, const Dim::Monomial& sub) {
  Dim::Monomial out;
  std::set_difference(m.begin(), m.end(), sub.begin(), sub.end(), std::back_inserter(out));
  return out;
}

Dim::Monomial times(const Dim::Monomial& a, const Dim::Monomial& b) {
  Dim::Monomial out;
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace

// ---- atoms ---------------------------------------------------------------------------------

bool operator==(const DimAtom& a, const DimAtom& b) { return (a <=> b) == 0; }

std::strong_ordering operator<=>(const DimAtom& a, const DimAtom& b) {
  if (a.is_symbol() != b.is_symbol()) return a.is_symbol() ? std::strong_ordering::less : std::strong_ordering::greater;
  if (a.is_symbol()) return a.symbol <=> b.symbol;
  if (auto c = *a.num <=> *b.num; c != 0) return c;
  return *a.den <=> *b.den;
}

std::strong_ordering operator<=>(const Dim& a, const Dim& b) { return a.terms_ <=> b.terms_; }

// ---- construction ----------------------------------------------------------------------------

Dim::Dim(int64_t value, int) {
  if (value != 0) terms_[{}] = value;
}

Dim::Dim(std::string_view symbol) {
  if (!is_identifier(symbol))
    fail(Code::kInvalidArgument, "symbolic dim name '", symbol,
         "' is not an identifier (letters, digits and '_', not starting with a digit)");
  terms_[{DimAtom{std::string(symbol), nullptr, nullptr}}] = 1;
}

Dim Dim::from_atom(DimAtom atom) {
  Dim d;
  d.terms_[{std::move(atom)}] = 1;
  return d;
}

// ---- queries ---------------------------------------------------------------------------------

Dim::Kind Dim::kind() const {
  if (terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty())) return Kind::kStatic;
  const auto& [mono, coeff] = *terms_.begin();
  if (terms_.size() == 1 && coeff == 1 && mono.size() == 1 && mono[0].is_symbol()) return Kind::kSymbolic;
  return Kind::kAlgebraic;
}

int64_t Dim::static_value() const {
  if (!is_static()) fail(Code::kInvalidArgument, "dim '", to_string(), "' is not static");
  return terms_.empty() ? 0 : terms_.begin()->second;
}

const std::string& Dim::symbol() const {
  if (!is_symbolic()) fail(Code::kInvalidArgument, "dim '", to_string(), "' is not a plain symbol");
  return terms_.begin()->first[0].symbol;
}

std::set<std::string> Dim::symbols() const {
  std::set<std::string> out;
  for (const auto& [mono, coeff] : terms_) {
    for (const DimAtom& atom : mono) {
      if (atom.is_symbol()) {
        out.insert(atom.symbol);
      } else {
        out.merge(atom.num->symbols());
        out.merge(atom.den->symbols());
      }
    }
  }
  return out;
}

int64_t Dim::evaluate(const std::map<std::string, int64_t, std::less<>>& values) const {
  int64_t total = 0;
  for (const auto& [mono, coeff] : terms_) {
    int64_t term = coeff;
    for (const DimAtom& atom : mono) {
      int64_t v;
      if (atom.is_symbol()) {
        auto it = values.find(atom.symbol);
        if (it == values.end()) fail(Code::kNotFound, "no value for symbolic dim '", atom.symbol, "'");
        v = it->second;
      } else {
        int64_t den = atom.den->evaluate(values);
        if (den == 0) fail(Code::kInvalidArgument, "dim '", to_string(), "' divides by zero");
        v = floor_div(atom.num->evaluate(values), den);
      }
      term = checked_mul(term, v);
    }
    total = checked_add(total, term);
  }
  return total;
}

size_t Dim::hash() const { return std::hash<std::string>{}(to_string()); }

// ---- arithmetic ------------------------------------------------------------------------------

Dim operator+(const Dim& a, const Dim& b) {
  Dim out = a;
  for (const auto& [mono, coeff] : b.terms_) {
    int64_t sum = checked_add(out.terms_[mono], coeff);
    if (sum == 0) out.terms_.erase(mono);
    else out.terms_[mono] = sum;
  }
  return out;
}

Dim operator-(const Dim& a) {
  Dim out = a;
  for (auto& [mono, coeff] : out.terms_) coeff = checked_mul(coeff, -1);
  return out;
}

Dim operator-(const Dim& a, const Dim& b) { return a + (-b); }

Dim operator*(const Dim& a, const Dim& b) {
  Dim out;
  for (const auto& [ma, ca] : a.terms_) {
    for (const auto& [mb, cb] : b.terms_) {
      Dim term;
      term.terms_[times(ma, mb)] = checked_mul(ca, cb);
      out = out + term;
    }
  }
  return out;
}

// floor((d*P + R) / d) == P + floor(R / d) for any integer P, so every term that the divisor
// divides exactly moves out of the division; only the remainder R stays an opaque atom.
// This folds static divisions, x*4 // 2 == x*2, (2*x + 1) // 2 == x, and a // a == 1.
Dim floordiv(const Dim& a, const Dim& b) {
  if (b == Dim(0)) fail(Code::kInvalidArgument, "dim '", a.to_string(), "' is divided by zero");
  if (b.terms_.size() != 1) {
    if (a == b) return Dim(1);
    return Dim::from_atom(DimAtom{{}, std::make_shared<const Dim>(a), std::make_shared<const Dim>(b)});
  }
  const auto& [bmono, bcoeff] = *b.terms_.begin();
  Dim quotient, rest;
  for (const auto& [mono, coeff] : a.terms_) {
    Dim term;
    if (contains(mono, bmono) && coeff % bcoeff == 0) {
      term.terms_[without(mono, bmono)] = coeff / bcoeff;
      quotient = quotient + term;
    } else {
      term.terms_[mono] = coeff;
      rest = rest + term;
    }
  }
  if (rest == Dim(0)) return quotient;
  if (rest.is_static() && b.is_static()) return quotient + Dim(floor_div(rest.static_value(), bcoeff));
  return quotient + Dim::from_atom(DimAtom{{}, std::make_shared<const Dim>(rest), std::make_shared<const Dim>(b)});
}

// ---- printing --------------------------------------------------------------------------------

namespace {

// A plain symbol or a non-negative number prints without parentheses inside a larger term.
bool is_simple(const Dim& d) {
  return d.is_symbolic() || (d.is_static() && d.static_value() >= 0);
}

std::string atom_to_string(const DimAtom& atom) {
  if (atom.is_symbol()) return atom.symbol;
  auto side = [](const Dim& d) { return is_simple(d) ? d.to_string() : "(" + d.to_string() + ")"; };
  return side(*atom.num) + " // " + side(*atom.den);
}

// `magnitude` is |coefficient|; the caller prints the sign. A division stands bare only when
// it is the whole term: "x // 2 * 3" and "-x // 2" would read back as other expressions.
std::string term_to_string(const Dim::Monomial& mono, uint64_t magnitude, bool leading_minus) {
  std::string out;
  bool alone = mono.size() == 1 && magnitude == 1 && !leading_minus;
  for (const DimAtom& atom : mono) {
    if (!out.empty()) out += " * ";
    out += (alone || atom.is_symbol()) ? atom_to_string(atom) : "(" + atom_to_string(atom) + ")";
  }
  if (magnitude != 1) out += " * " + std::to_string(magnitude);
  return out;
}

}  // namespace

std::string Dim::to_string() const {
  if (terms_.empty()) return "0";
  std::string out;
  auto append = [&](bool negative, const std::string& body) {
    if (out.empty()) out = negative ? "-" + body : body;
    else out += (negative ? " - " : " + ") + body;
  };
  // The constant term sorts first in the map; it reads better last ("batch + 1").
  for (const auto& [mono, coeff] : terms_) {
    if (mono.empty()) continue;
    // -coeff of INT64_MIN overflows; print its magnitude through unsigned arithmetic.
    uint64_t magnitude = coeff < 0 ? 0 - static_cast<uint64_t>(coeff) : static_cast<uint64_t>(coeff);
    append(coeff < 0, term_to_string(mono, magnitude, out.empty() && coeff < 0));
  }
  if (auto it = terms_.find(Monomial{}); it != terms_.end()) {
    int64_t c = it->second;
    if (out.empty()) return std::to_string(c);
    uint64_t magnitude = c < 0 ? 0 - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
    append(c < 0, std::to_string(magnitude));
  }
  return out;
}

std::ostream& operator<<(std::ostream& out, const Dim& d) { return out << d.to_string(); }

std::string dims_to_string(const std::vector<Dim>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + dims[i].to_string();
  return out + "]";
}

Dim dims_product(const std::vector<Dim>& dims) {
  Dim out(1);
  for (const Dim& d : dims) out = out * d;
  return out;
}

// ---- parsing ---------------------------------------------------------------------------------

namespace {

// Recursive descent over:  expr := term (('+' | '-') term)*
//                          term := unary (('*' | '//') unary)*
//                          unary := '-' unary | INT | IDENT | '(' expr ')'
// Limits keep hostile text (from a file or an ABI caller) from exhausting the stack or
// memory: nesting depth, length, and the number of terms a product may expand to.
class DimParser {
 public:
  static constexpr size_t kMaxLength = 4096;
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxTerms = 256;

  explicit DimParser(std::string_view text) : text_(text) {}

  Dim parse() {
    if (text_.size() > kMaxLength) error(str_cat("longer than ", kMaxLength, " characters"));
    Dim d = expr();
    skip_space();
    if (pos_ != text_.size()) error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return d;
  }

 private:
  Dim expr() {
    Dim d = term();
    while (true) {
      if (accept("+")) d = d + term();
      else if (accept("-")) d = d - term();
      else return d;
    }
  }

  Dim term() {
    Dim d = unary();
    while (true) {
      if (accept("//")) d = floordiv(d, unary());
      else if (accept("*")) d = multiply(d, unary());
      else return d;
    }
  }

  Dim unary() {
    if (++depth_ > kMaxDepth) error(str_cat("nested deeper than ", kMaxDepth, " levels"));
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    if (accept("-")) return -unary();
    if (accept("(")) {
      Dim d = expr();
      if (!accept(")")) error("expected ')'");
      return d;
    }
    skip_space();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string_view token = text_.substr(start, pos_ - start);
    if (token.empty()) error("expected a number, a name or '('");
    if (!std::isdigit(static_cast<unsigned char>(token[0]))) return Dim(token);
    int64_t value = 0;
    for (char c : token) {
      if (!std::isdigit(static_cast<unsigned char>(c))) error("malformed number '" + std::string(token) + "'");
      value = checked_add(checked_mul(value, 10), c - '0');
    }
    return Dim(value);
  }

  // Checked before multiplying: a product of sums expands to |a| * |b| terms.
  Dim multiply(const Dim& a, const Dim& b) {
    if (a.terms().size() * b.terms().size() > kMaxTerms)
      error(str_cat("expands to more than ", kMaxTerms, " terms"));
    return a * b;
  }

  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  [[noreturn]] void error(const std::string& what) {
    fail(Code::kInvalidArgument, "cannot parse dim '", text_, "': ", what, " at offset ", pos_);
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Dim Dim::parse(std::string_view text) { return DimParser(text).parse(); }

}  // namespace maxc
