// The kernels one thread launches while a trace is open: the record that
// Model::debug_verify_replay compares between a captured graph and an eager run. On a GPU an
// entry is a kernel launch (its function and grid); on the host, a step of the plan.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "base/str_cat.h"

namespace maxc {

class LaunchTrace {
 public:
  // Records this thread's launches until destroyed; a trace opened inside another hides it
  // until it closes.
  LaunchTrace() : previous_(current_) { current_ = this; }
  ~LaunchTrace() { current_ = previous_; }
  LaunchTrace(const LaunchTrace&) = delete;
  LaunchTrace& operator=(const LaunchTrace&) = delete;

  // Appends to the open trace of this thread, if any (a thread-local read otherwise).
  static void record(std::string entry) {
    if (current_) current_->entries_.push_back(std::move(entry));
  }
  static bool open() { return current_ != nullptr; }

  const std::vector<std::string>& entries() const { return entries_; }

 private:
  static inline thread_local LaunchTrace* current_ = nullptr;
  LaunchTrace* previous_;
  std::vector<std::string> entries_;
};

// FAILED_PRECONDITION naming the first launch where an eager run and a recording (`what`,
// "graph key 7") differ.
inline void expect_same_launches(const std::vector<std::string>& eager, const std::vector<std::string>& recorded,
                                 const std::string& what) {
  size_t i = 0;
  while (i < eager.size() && i < recorded.size() && eager[i] == recorded[i]) ++i;
  if (i == eager.size() && i == recorded.size()) return;
  auto at = [i](const std::vector<std::string>& t) { return i < t.size() ? str_cat("'", t[i], "'") : "nothing"; };
  fail(Code::kFailedPrecondition, "the eager run launched ", eager.size(), " kernels and ", what, " holds ",
       recorded.size(), "; they differ at launch ", i, ": eager ", at(eager), ", recorded ", at(recorded));
}

}  // namespace maxc
