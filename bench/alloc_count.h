// Counts the process's C++ heap allocations (every replaceable global operator new), so a
// benchmark can report allocations per call. Linking alloc_count.cc into an executable
// replaces operator new/delete there, and in every library it loads (the dynamic linker binds
// libmax_c's operator new to the executable's). Plain malloc and aligned_alloc are not
// counted: libmax_c calls them directly only for tensor and arena bytes (driver/device.cc).
#pragma once

#include <cstdint>

namespace bench {

// Allocations made so far, by every thread.
uint64_t allocation_count();

}  // namespace bench
