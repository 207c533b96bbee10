/* The public header as strict ISO C99: built with -std=c99 -pedantic -Wall -Wextra -Werror
 * (see abi_tests/CMakeLists.txt). A warning anywhere in max_c.h breaks the build. The program
 * also uses every macro kind once, so a macro that does not expand to valid C99 fails too. */
#include "max_c.h"

#include <stdio.h>

int main(void) {
  max_context_options_t options;
  DLManagedTensorVersioned managed;
  uint64_t flags = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED |
                   DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;
  max_status_t* status = max_check_abi(MAX_ABI_VERSION);
  int failed = status != NULL;
  (void)options;
  (void)managed;
  if (failed) fprintf(stderr, "max_check_abi: %s\n", max_status_message(status));
  max_status_release(status);
  if (max_abi_version() >> 16 != MAX_ABI_VERSION_MAJOR || flags != 7u ||
      MAX_TENSOR_MAX_RANK != 64 || max_dtype_size_in_bytes(MAX_DTYPE_FLOAT32) != 4)
    failed = 1;
  printf("header_c99: %s\n", failed ? "FAILED" : "ok");
  return failed;
}
