/* Helpers shared by the cmocka suites of the ABI: status expectations that say what went
 * wrong, and small factories. Header-only; every suite is one C11 file that includes it. */
#ifndef MAX_C_ABI_TEST_H_
#define MAX_C_ABI_TEST_H_

#include <setjmp.h> /* cmocka.h needs these first */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "max_c.h"

/* ---- status expectations ----------------------------------------------------------------
 *
 * EXPECT_OK(call)                          call returns NULL (success)
 * EXPECT_STATUS(call, CODE, "a", "b", ...) call fails with MAX_STATUS_CODE and a non-empty
 *                                          message containing every fragment given
 * Either way the status is released before the verdict, so a failing test leaks nothing. */

static const char* abi_check_status(max_status_t* status, max_status_code_t want,
                                    const char* const* fragments) {
  static char why[2048];
  const char* verdict = NULL;
  if (want == MAX_STATUS_OK) {
    if (status) {
      snprintf(why, sizeof why, "failed with %s: \"%s\"",
               max_status_code_name(max_status_code(status)), max_status_message(status));
      verdict = why;
    }
  } else if (!status) {
    snprintf(why, sizeof why, "succeeded, expected %s", max_status_code_name(want));
    verdict = why;
  } else {
    max_status_code_t code = max_status_code(status);
    const char* message = max_status_message(status);
    if (code != want) {
      snprintf(why, sizeof why, "failed with %s (\"%s\"), expected %s",
               max_status_code_name(code), message ? message : "(null)",
               max_status_code_name(want));
      verdict = why;
    } else if (!message || !*message) {
      snprintf(why, sizeof why, "failed with %s and an empty message", max_status_code_name(code));
      verdict = why;
    } else {
      for (; fragments && *fragments; ++fragments) {
        if (!strstr(message, *fragments)) {
          snprintf(why, sizeof why, "failed with %s as expected, but the message \"%s\" does "
                   "not mention \"%s\"", max_status_code_name(code), message, *fragments);
          verdict = why;
          break;
        }
      }
    }
  }
  max_status_release(status);
  return verdict;
}

#define EXPECT_OK(call)                                                             \
  do {                                                                              \
    const char* abi_why_ = abi_check_status((call), MAX_STATUS_OK, NULL);           \
    if (abi_why_) fail_msg("%s %s", #call, abi_why_);                               \
  } while (0)

#define EXPECT_STATUS(call, code, ...)                                                      \
  do {                                                                                      \
    const char* const abi_fragments_[] = {__VA_ARGS__, NULL};                               \
    const char* abi_why_ = abi_check_status((call), (code), abi_fragments_);                \
    if (abi_why_) fail_msg("%s %s", #call, abi_why_);                                       \
  } while (0)

/* The usual failure of a NULL handle or NULL out pointer: INVALID_ARGUMENT naming it. */
#define EXPECT_INVALID(call, ...) EXPECT_STATUS(call, MAX_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- sentinels for out parameters: a failed call must overwrite them with NULL/zero ---- */

#define SENTINEL_PTR ((void*)(uintptr_t)0xdeadbeef)

/* ---- factories --------------------------------------------------------------------------- */

static inline max_tensor_t* make_tensor_f32(const int64_t* dims, int32_t rank,
                                            const float* values, size_t count) {
  max_tensor_t* t = NULL;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, rank, values,
                                        count * sizeof(float), &t));
  assert_non_null(t);
  return t;
}

static inline max_tensor_t* make_zeros(max_dtype_t dtype, const int64_t* dims, int32_t rank) {
  max_tensor_t* t = NULL;
  EXPECT_OK(max_tensor_create(NULL, dtype, dims, rank, &t));
  assert_non_null(t);
  return t;
}

static inline max_device_t* cpu_device(void) {
  max_device_t* d = NULL;
  EXPECT_OK(max_device_create(MAX_DEVICE_KIND_CPU, 0, &d));
  assert_non_null(d);
  return d;
}

/* Reads a float tensor back through max_tensor_to_host and compares it with `want`. */
static inline void expect_f32_contents(const max_tensor_t* t, const float* want, size_t count) {
  float got[256];
  size_t i;
  assert_true(count <= sizeof got / sizeof got[0]);
  EXPECT_OK(max_tensor_to_host(t, got, count * sizeof(float)));
  for (i = 0; i < count; ++i) {
    if (got[i] != want[i]) fail_msg("element %zu is %g, expected %g", i, got[i], want[i]);
  }
}

/* Release callback counters for borrowed memory and DLPack deleters. */
typedef struct {
  int calls;
} call_counter;

static inline void count_call(void* user_data) { ++((call_counter*)user_data)->calls; }

#endif /* MAX_C_ABI_TEST_H_ */
