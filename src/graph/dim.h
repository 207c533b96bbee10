// One dimension of a tensor type: static (an int64), symbolic (a name such as "batch") or
// algebraic (+, -, * and floor division of dims).
//
// Every Dim is kept in one canonical form, so structural equality is mathematical equality
// for everything +, - and * can build: a polynomial over "atoms" with int64 coefficients.
// An atom is a symbol or a floor division that did not simplify; a monomial is a sorted
// multiset of atoms; the polynomial is a sorted map monomial -> non-zero coefficient, where
// the empty monomial holds the constant term. So `-(x + 4) == -x - 4` and
// `batch * 5 == 5 * batch`, while `(x // 2) * 2` stays distinct from `x` (floor semantics).
//
// Dims print in the form `parse()` reads back ("batch * 5", "-x - 4", "(n + 1) // 2"), which
// is also how the serializer stores them.
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace maxc {

class Dim;

// A factor that does not simplify: a symbol, or floor(numerator / denominator).
struct DimAtom {
  std::string symbol;                          // set for a symbol
  std::shared_ptr<const Dim> num, den;         // set for a floor division
  bool is_symbol() const { return num == nullptr; }
};
bool operator==(const DimAtom& a, const DimAtom& b);
std::strong_ordering operator<=>(const DimAtom& a, const DimAtom& b);

class Dim {
 public:
  using Monomial = std::vector<DimAtom>;  // sorted; empty = the constant term
  enum class Kind { kStatic, kSymbolic, kAlgebraic };

  Dim() : Dim(int64_t{0}) {}
  // Implicit, like MAX's DimLike: {"batch", 10} is a shape. A template so that the literal 0
  // picks this constructor rather than the pointer one.
  template <std::integral T>
  Dim(T value) : Dim(static_cast<int64_t>(value), 0) {}
  Dim(const char* symbol) : Dim(std::string_view(symbol)) {}
  Dim(std::string_view symbol);  // a C identifier; anything else is INVALID_ARGUMENT

  // Reads the printed form back: integers, identifiers, + - * //, unary -, parentheses.
  static Dim parse(std::string_view text);

  Kind kind() const;
  bool is_static() const { return kind() == Kind::kStatic; }
  bool is_symbolic() const { return kind() == Kind::kSymbolic; }
  int64_t static_value() const;         // INVALID_ARGUMENT unless static
  const std::string& symbol() const;    // INVALID_ARGUMENT unless symbolic
  std::set<std::string> symbols() const;  // every symbol the expression mentions

  // Substitutes every symbol; NOT_FOUND names a symbol that `values` lacks.
  int64_t evaluate(const std::map<std::string, int64_t, std::less<>>& values) const;

  std::string to_string() const;
  size_t hash() const;
  const std::map<Monomial, int64_t>& terms() const { return terms_; }

  friend Dim operator+(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a, const Dim& b);
  friend Dim operator*(const Dim& a, const Dim& b);
  friend Dim operator-(const Dim& a);
  friend Dim floordiv(const Dim& a, const Dim& b);  // rounds toward -inf, like Python's //
  friend bool operator==(const Dim& a, const Dim& b) { return a.terms_ == b.terms_; }
  friend std::strong_ordering operator<=>(const Dim& a, const Dim& b);

 private:
  Dim(int64_t value, int);  // the tag keeps it apart from the public template
  static Dim from_atom(DimAtom atom);
  std::map<Monomial, int64_t> terms_;  // coefficients are never 0
};

std::ostream& operator<<(std::ostream& out, const Dim& d);
std::string dims_to_string(const std::vector<Dim>& dims);  // "[batch, 10]"

// Product of the dims (1 for an empty list).
Dim dims_product(const std::vector<Dim>& dims);

}  // namespace maxc

template <>
struct std::hash<maxc::Dim> {
  size_t operator()(const maxc::Dim& d) const { return d.hash(); }
};
