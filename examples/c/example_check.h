/*
 * example_check.h -- the one helper the C examples share: check a max_c status, and on
 * failure print where, the code's name and the message, and exit non-zero.
 */
#ifndef MAX_C_EXAMPLE_CHECK_H_
#define MAX_C_EXAMPLE_CHECK_H_

#include <stdio.h>
#include <stdlib.h>

#include "max_c.h"

static void example_check(max_status_t* status, const char* call, const char* file, int line) {
  if (status == NULL) return;
  fprintf(stderr, "%s:%d: %s failed: %s: %s\n", file, line, call,
          max_status_code_name(max_status_code(status)), max_status_message(status));
  max_status_release(status);
  exit(EXIT_FAILURE);
}

/* CHECK(max_tensor_create(...)): exits with the status message when the call fails. */
#define CHECK(call) example_check((call), #call, __FILE__, __LINE__)

/* EXPECT(condition, "what"): exits when a plain condition does not hold. */
#define EXPECT(condition, what)                                                  \
  do {                                                                           \
    if (!(condition)) {                                                          \
      fprintf(stderr, "%s:%d: expected %s (%s)\n", __FILE__, __LINE__, what,     \
              #condition);                                                       \
      exit(EXIT_FAILURE);                                                        \
    }                                                                            \
  } while (0)

#endif /* MAX_C_EXAMPLE_CHECK_H_ */
