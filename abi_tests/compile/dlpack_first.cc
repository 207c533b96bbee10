// The same program as dlpack_first.c, compiled as C++17 with -pedantic -Werror: in C++ the
// third-party header's DLDeviceType is an int32_t-based enum, and max_c.h must still be
// happy after it.
#include "dlpack_first.c"
