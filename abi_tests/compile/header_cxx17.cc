// The public header as ISO C++17: built with -std=c++17 -pedantic -Wall -Wextra -Werror
// (see abi_tests/CMakeLists.txt). The declarations must have C linkage: the calls below link
// against the library's unmangled symbols, so a missing extern "C" fails at link time.
#include "max_c.h"

#include <cstdio>
#include <type_traits>

static_assert(std::is_standard_layout<max_context_options_t>::value, "C layout");
static_assert(std::is_trivially_copyable<DLManagedTensorVersioned>::value, "C layout");
static_assert(std::is_same<decltype(&max_tensor_create),
                           max_status_t* (*)(max_device_t*, max_dtype_t, const int64_t*, int32_t,
                                             max_tensor_t**)>::value,
              "max_tensor_create's signature");

int main() {
  max_status_t* status = max_check_abi(MAX_ABI_VERSION);
  bool failed = status != nullptr;
  if (failed) std::fprintf(stderr, "max_check_abi: %s\n", max_status_message(status));
  max_status_release(status);
  max_tensor_t* tensor = nullptr;
  const int64_t dims[] = {2, 3};
  status = max_tensor_create(nullptr, MAX_DTYPE_FLOAT32, dims, 2, &tensor);
  failed = failed || status != nullptr;
  max_status_release(status);
  DLManagedTensorVersioned* managed = nullptr;
  status = max_tensor_to_dlpack(tensor, &managed);
  failed = failed || status != nullptr || managed == nullptr ||
           (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
  max_status_release(status);
  if (managed) managed->deleter(managed);
  max_tensor_release(tensor);
  std::printf("header_cxx17: %s\n", failed ? "FAILED" : "ok");
  return failed ? 1 : 0;
}
