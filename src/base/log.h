// Leveled logging to stderr, quiet by default. The level is process-wide; it starts from
// MAX_C_LOG_LEVEL (a number or a name) and otherwise is kWarning.
#pragma once

#include <cstdint>

#include "base/str_cat.h"

namespace maxc {

enum class LogLevel : int32_t { kOff = 0, kError, kWarning, kInfo, kDebug, kTrace };

LogLevel log_level();
void set_log_level(LogLevel level);
inline bool log_enabled(LogLevel level) {
  return level != LogLevel::kOff && level <= log_level();
}
void log_write(LogLevel level, const char* file, int line, const std::string& message);

}  // namespace maxc

// Formats its arguments only when the level is enabled.
#define MAXC_LOG(level, ...)                                                             \
  do {                                                                                   \
    if (::maxc::log_enabled(::maxc::LogLevel::level))                                    \
      ::maxc::log_write(::maxc::LogLevel::level, __FILE__, __LINE__,                     \
                        ::maxc::str_cat(__VA_ARGS__));                                   \
  } while (0)
