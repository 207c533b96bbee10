// What a caller allows one execute: a deadline and a cancellation flag (max_run_options_t).
// The executor checks them before every step of a plan and a while_loop (ONNX Loop, Scan)
// before every iteration, so a call stops within one step of either, with
// DEADLINE_EXCEEDED or CANCELLED naming the op, and leaves the model as usable as a failed
// input check does: every workspace goes back to its pool as the error unwinds.
//
// The limits ride on the calling thread (a RunLimitsScope around the call) rather than down
// every signature: region plans and staged or specialized models run on that thread too, so
// they all see them. Kernels that split work over the pool are not interrupted inside one
// step. Without a scope nothing is checked (one thread-local load per step).
//
// Thread-safety: a scope belongs to its thread; the cancel flag may be set from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>

namespace maxc {

struct RunLimits {
  int64_t timeout_us = 0;              // 0: no deadline
  const int32_t* cancel_flag = nullptr;  // the caller's; nonzero cancels. Null: none
};

// Applies `limits` to the executes of this thread while it lives; the deadline counts from
// here (a timeout past 30 years is none). Scopes nest: the inner one replaces the outer one
// until it ends; empty limits lift them.
class RunLimitsScope {
 public:
  explicit RunLimitsScope(const RunLimits& limits);
  RunLimitsScope(const RunLimitsScope&) = delete;
  RunLimitsScope& operator=(const RunLimitsScope&) = delete;
  ~RunLimitsScope();

  struct Active {
    RunLimits limits;
    std::chrono::steady_clock::time_point deadline;
  };

 private:
  Active active_;
  const Active* outer_;
};

namespace run_limits_detail {
extern thread_local const RunLimitsScope::Active* current;
void check(std::string_view op, const char* unit, int64_t index);
}  // namespace run_limits_detail

// Throws CANCELLED or DEADLINE_EXCEEDED when this thread's limits say stop, the message
// naming where: "op 'add' (step 3)", "op 'while_loop' (iteration 4096)".
inline void check_run_limits(std::string_view op, const char* unit, int64_t index) {
  if (run_limits_detail::current) run_limits_detail::check(op, unit, index);
}

// Whether this thread runs under limits (a loop decides whether to label its iterations).
inline bool run_limits_active() { return run_limits_detail::current != nullptr; }

}  // namespace maxc
