#include "base/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace maxc {
namespace {

constexpr const char* kNames[] = {"off", "error", "warning", "info", "debug", "trace"};

LogLevel level_from_env() {
  const char* env = std::getenv("MAX_C_LOG_LEVEL");
  if (!env || !*env) return LogLevel::kWarning;
  for (int i = 0; i <= static_cast<int>(LogLevel::kTrace); ++i)
    if (std::strcmp(env, kNames[i]) == 0 || (env[0] == '0' + i && env[1] == 0))
      return static_cast<LogLevel>(i);
  std::fprintf(stderr, "max_c: ignoring MAX_C_LOG_LEVEL='%s' (use off..trace or 0..5)\n", env);
  return LogLevel::kWarning;
}

std::atomic<int32_t>& level_slot() {
  static std::atomic<int32_t> level{static_cast<int32_t>(level_from_env())};
  return level;
}

}  // namespace

LogLevel log_level() { return static_cast<LogLevel>(level_slot().load(std::memory_order_relaxed)); }

void set_log_level(LogLevel level) {
  level_slot().store(static_cast<int32_t>(level), std::memory_order_relaxed);
}

void log_write(LogLevel level, const char* file, int line, const std::string& message) {
  // One lock so lines from concurrent threads do not interleave.
  static std::mutex mu;
  const char* base = std::strrchr(file, '/');
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "max_c %s %s:%d] %s\n", kNames[static_cast<int>(level)],
               base ? base + 1 : file, line, message.c_str());
}

}  // namespace maxc
