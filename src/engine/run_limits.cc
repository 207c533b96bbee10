#include "engine/run_limits.h"

#include "base/error.h"

namespace maxc {

namespace run_limits_detail {

thread_local const RunLimitsScope::Active* current = nullptr;

void check(std::string_view op, const char* unit, int64_t index) {
  const RunLimits& limits = current->limits;
  const auto where = [&] { return str_cat("op '", op, "' (", unit, " ", index, ")"); };
  // A relaxed atomic load: the flag is written by another thread, and only its change matters.
  if (limits.cancel_flag && __atomic_load_n(limits.cancel_flag, __ATOMIC_RELAXED) != 0)
    fail(Code::kCancelled, where(), ": the call was cancelled (its run options' cancel flag is set)");
  if (limits.timeout_us > 0 && std::chrono::steady_clock::now() > current->deadline)
    fail(Code::kDeadlineExceeded, where(), ": the call ran past its deadline (a timeout of ", limits.timeout_us,
         " us)");
}

}  // namespace run_limits_detail

namespace {
constexpr int64_t kMaxTimeoutUs = int64_t{30} * 366 * 24 * 3600 * 1'000'000;  // steady_clock cannot overflow
}

RunLimitsScope::RunLimitsScope(const RunLimits& limits)
    : active_{limits, {}}, outer_(run_limits_detail::current) {
  if (active_.limits.timeout_us > kMaxTimeoutUs || active_.limits.timeout_us < 0) active_.limits.timeout_us = 0;
  if (active_.limits.timeout_us > 0)
    active_.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(active_.limits.timeout_us);
  const bool any = active_.limits.timeout_us > 0 || active_.limits.cancel_flag;
  run_limits_detail::current = any ? &active_ : nullptr;
}

RunLimitsScope::~RunLimitsScope() { run_limits_detail::current = outer_; }

}  // namespace maxc
