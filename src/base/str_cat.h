#pragma once

#include <sstream>
#include <string>

namespace maxc {

template <typename... Parts>
std::string str_cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace maxc
