#include "kernels/cpu/quant_fit.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu/quant_round.h"
#include "kernels/cpu/simd.h"

namespace maxc::cpu {
namespace {

// What the normal equations need from a block's levels under one (scale, offset). Blocks are
// 16 or 32 elements, so float sums are exact enough, and they let the loop vectorize.
struct LevelSums {
  double sq_err = 0, q = 0, qq = 0, qx = 0, x = 0;
  int min_level = 0, max_level = 0;
};

MAXC_SIMD_CLONES LevelSums levels(const float* x, int n, int lo, int hi, float scale, float offset) {
  const float inv = scale != 0 ? 1 / scale : 0, flo = static_cast<float>(lo), fhi = static_cast<float>(hi);
  float sq_err = 0, sq = 0, sqq = 0, sqx = 0, sx = 0, qmin = fhi, qmax = flo;
#pragma omp simd reduction(+ : sq_err, sq, sqq, sqx, sx) reduction(min : qmin) reduction(max : qmax)
  for (int i = 0; i < n; ++i) {
    const float q = round_small(clamp_to((x[i] + offset) * inv, flo, fhi)), e = scale * q - offset - x[i];
    sq_err += e * e, sq += q, sqq += q * q, sqx += q * x[i], sx += x[i];
    qmin = std::min(qmin, q), qmax = std::max(qmax, q);
  }
  return {sq_err, sq, sqq, sqx, sx, static_cast<int>(qmin), static_cast<int>(qmax)};
}

// Whether every element lies on the grid scale * q - offset, q in [lo, hi], up to the float
// rounding of a decoded block: a few ulps of x and of the offset, in levels (random data
// fails at its first element or two).
bool on_grid(const float* x, int n, int lo, int hi, float scale, float offset) {
  if (scale == 0) return false;
  const float inv = 1 / scale, ulps = 4e-7f * std::fabs(inv);
  for (int i = 0; i < n; ++i) {
    const float v = (x[i] + offset) * inv, q = round_small(v);
    if (q < lo || q > hi || std::fabs(v - q) > ulps * (std::fabs(x[i]) + offset) + 1e-6f) return false;
  }
  return true;
}

// The best fit so far. Of fits that tie (a block that is already on a grid fits several
// ways, exactly up to rounding), the one with the largest scale wins, so that the choice does
// not depend on the order of the candidates.
struct Best {
  AffineFit fit;
  double err = INFINITY;
  double energy = 0;  // Σ x²

  void offer(const AffineFit& f, double e) {
    if (same_fit_error(e, err, energy) ? std::fabs(f.scale) > std::fabs(fit.scale) : e < err) fit = f;
    err = std::min(err, e);
  }
};

// Tries refinements of `f` (each: assign levels, then solve for the best scale and offset
// with those levels fixed), offering each to `best`.
template <typename Solve>
void refine(const float* x, int n, int lo, int hi, AffineFit f, Solve&& solve, Best& best, int rounds = 3) {
  for (int round = 0; round < rounds; ++round) {
    const LevelSums s = levels(x, n, lo, hi, f.scale, f.offset);
    best.offer(f, s.sq_err);
    AffineFit raised{0, -1};
    if (!solve(s, f, round + 1 < rounds ? &raised : nullptr)) return;
    if (raised.offset >= 0) refine(x, n, lo, hi, raised, solve, best, rounds - round - 1);
  }
  best.offer(f, levels(x, n, lo, hi, f.scale, f.offset).sq_err);
}

double energy_of(const float* x, int n) {
  double e = 0;
  for (int i = 0; i < n; ++i) e += double{x[i]} * x[i];
  return e;
}

}  // namespace

float fit_symmetric_scale(const float* x, int n, int lo, int hi, float (*stored)(float)) {
  float top = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(top)) top = x[i];
  if (top == 0) return 0;
  // d = Σ q x / Σ q q minimizes Σ (d q - x)² for fixed levels.
  auto solve = [](const LevelSums& s, AffineFit& f, AffineFit*) {
    if (s.qq == 0) return false;
    f.scale = static_cast<float>(s.qx / s.qq);
    return true;
  };
  Best best{{top / lo, 0}, levels(x, n, lo, hi, top / lo, 0).sq_err, energy_of(x, n)};
  // A block this encoding decoded lies on a grid whose largest level is in the outer half of
  // the range: found there, it is kept exactly (refitted once to undo the decoder's rounding).
  // The scale is checked as it will be stored, so that a coarser grid that only fits before
  // rounding (levels all even, say) is not taken for the block's own.
  for (int level = lo; level <= hi; ++level) {
    if (2 * std::abs(level) < std::min(-lo, hi) || !on_grid(x, n, lo, hi, stored(top / level), 0)) continue;
    refine(x, n, lo, hi, AffineFit{top / level, 0}, solve, best, 1);
    return best.fit.scale;
  }
  // Otherwise the largest element on levels near either end, in quarter steps.
  for (int step = 0; step <= 6; ++step)
    for (float level : {lo + 0.25f * step, hi - 0.25f * step})
      refine(x, n, lo, hi, AffineFit{top / level, 0}, solve, best);
  return best.fit.scale;
}

AffineFit fit_affine(const float* x, int n, int nmax) {
  float lo = 0, hi = x[0];
  for (int i = 0; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  if (hi <= lo) return {0, -lo};  // constant and <= 0: every element is -offset
  // With the levels fixed, Σ (s q - o - x)² is least at the (s, o) the normal equations give.
  // An offset that comes out negative is pinned at 0 with the scale refitted alone, and, as a
  // second guess, raised by whole steps (the levels all move down), which keeps the shape.
  auto solve = [n](const LevelSums& s, AffineFit& f, AffineFit* raised) {
    const double det = n * s.qq - s.q * s.q;
    if (det <= 0) return false;
    double scale = (n * s.qx - s.x * s.q) / det, offset = (scale * s.q - s.x) / n;
    if (offset < 0 && scale > 0 && raised)
      *raised = {static_cast<float>(scale), static_cast<float>(offset + scale * std::ceil(-offset / scale))};
    if (offset < 0) offset = 0, scale = s.qx / s.qq;
    if (!(scale > 0)) return false;
    f = {static_cast<float>(scale), static_cast<float>(offset)};
    return true;
  };
  const AffineFit first{(hi - lo) / nmax, -lo};
  Best best{first, levels(x, n, 0, nmax, first.scale, first.offset).sq_err, energy_of(x, n)};
  // A block this encoding decoded spans a whole number of levels (at least half of them) from
  // its smallest element; the offset is the smallest non-negative one on that grid.
  const float xmin = *std::min_element(x, x + n);
  bool exact = false;
  for (int span = nmax; 2 * span >= nmax && !exact; --span) {
    const float scale = (hi - xmin) / span;
    const float offset = xmin < 0 ? -xmin : scale * std::ceil(xmin / scale) - xmin;
    exact = on_grid(x, n, 0, nmax, scale, offset);
    if (exact) refine(x, n, 0, nmax, AffineFit{scale, offset}, solve, best, 1);
  }
  // Otherwise the range spread over about nmax levels, in quarter steps.
  for (int step = -4; step <= 4 && !exact; ++step)
    refine(x, n, 0, nmax, AffineFit{(hi - lo) / (nmax + 0.25f * step), -lo}, solve, best);
  // Fits as good as the best whose levels differ from its by a constant: which of them a
  // block was encoded with shows only against the other sub-blocks' offsets, so the caller
  // chooses (see AffineFit::shifts). Only shifts that keep every level in range can tie.
  AffineFit fit = best.fit;
  const LevelSums at = levels(x, n, 0, nmax, fit.scale, fit.offset);
  int low = 0, high = 0;
  for (int shift = -at.min_level; shift <= nmax - at.max_level; ++shift) {
    const float offset = fit.offset + fit.scale * shift;
    if (shift == 0 || offset < 0) continue;
    if (same_fit_error(levels(x, n, 0, nmax, fit.scale, offset).sq_err, best.err, best.energy))
      low = std::min(low, shift), high = std::max(high, shift);
  }
  fit.offset += fit.scale * low;
  fit.shifts = high - low;
  return fit;
}

}  // namespace maxc::cpu
