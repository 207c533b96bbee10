/*
 * tensors.c -- tensors through the C ABI: create, borrow host memory (with strides and a
 * release callback), view, copy, copy_from and to_host, and the read-only rule.
 * Every call is checked; any failure prints its message and exits non-zero.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "example_check.h"
#include "max_c.h"

static int released = 0;
static void on_release(void* user_data) {
  ++*(int*)user_data;
}

int main(void) {
  CHECK(max_check_abi(MAX_ABI_VERSION));

  /* 1. A zero-filled float32 [2, 3] on the CPU (device NULL). */
  const int64_t dims[2] = {2, 3};
  max_tensor_t* zeros;
  CHECK(max_tensor_create(NULL, MAX_DTYPE_FLOAT32, dims, 2, &zeros));
  size_t bytes;
  int64_t count;
  CHECK(max_tensor_byte_size(zeros, &bytes));
  CHECK(max_tensor_num_elements(zeros, &count));
  EXPECT(bytes == 24 && count == 6, "float32[2, 3] to hold 6 elements in 24 bytes");

  /* 2. Borrow host memory as the transpose of a 2x3 matrix: no copy, strides in elements. */
  float matrix[6] = {0, 1, 2, 3, 4, 5};
  const int64_t tdims[2] = {3, 2}, tstrides[2] = {1, 3};
  max_tensor_t* transposed;
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, tdims, 2, tstrides, matrix, 0, on_release,
                                   &released, &transposed));
  int32_t contiguous;
  CHECK(max_tensor_is_contiguous(transposed, &contiguous));
  EXPECT(!contiguous, "the transpose to be strided");

  /* 3. to_host gives the elements in row-major order of the view. */
  float out[6];
  CHECK(max_tensor_to_host(transposed, out, sizeof(out)));
  const float expected[6] = {0, 3, 1, 4, 2, 5};
  EXPECT(memcmp(out, expected, sizeof(out)) == 0, "the transpose's elements");

  /* 4. A deep contiguous copy; then copy_from writes through the borrowed view. */
  max_tensor_t* copy;
  CHECK(max_tensor_copy(transposed, NULL, &copy));
  CHECK(max_tensor_is_contiguous(copy, &contiguous));
  EXPECT(contiguous, "a copy to be contiguous");
  float* copy_data;
  CHECK(max_tensor_mutable_data(copy, (void**)&copy_data));
  for (int i = 0; i < 6; ++i) copy_data[i] *= 10.0f;
  CHECK(max_tensor_copy_from(transposed, copy));
  EXPECT(matrix[1] == 10.0f && matrix[3] == 30.0f, "copy_from to write the borrowed memory");

  /* 5. view: the copy's 24 bytes as int32 [6] (same bytes), then as uint8 [24]. */
  const int64_t six[1] = {6}, bytes24[1] = {24};
  max_tensor_t *as_int, *as_bytes;
  CHECK(max_tensor_view(copy, MAX_DTYPE_INT32, six, 1, &as_int));
  CHECK(max_tensor_view(as_int, MAX_DTYPE_UINT8, bytes24, 1, &as_bytes));
  uint8_t raw[24];
  CHECK(max_tensor_to_host(as_bytes, raw, sizeof(raw)));
  EXPECT(memcmp(raw, copy_data, sizeof(raw)) == 0, "a view to see the same bytes");

  /* 6. Errors: a view of a strided tensor, a wrong destination size, a read-only write. */
  max_tensor_t* bad = NULL;
  max_status_t* status = max_tensor_view(transposed, MAX_DTYPE_FLOAT32, six, 1, &bad);
  EXPECT(max_status_code(status) == MAX_STATUS_INVALID_ARGUMENT && bad == NULL,
         "viewing a strided tensor to fail");
  printf("view of a strided tensor: %s\n", max_status_message(status));
  max_status_release(status);

  status = max_tensor_to_host(copy, out, 5);
  EXPECT(max_status_code(status) == MAX_STATUS_INVALID_ARGUMENT, "to_host of 5 bytes to fail");
  printf("to_host into 5 bytes: %s\n", max_status_message(status));
  max_status_release(status);

  const float constants[2] = {1.0f, 2.0f};
  const int64_t two[1] = {2};
  max_tensor_t* read_only;
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, two, 1, NULL, (void*)constants, 1, NULL,
                                   NULL, &read_only));
  void* writable = (void*)constants;
  status = max_tensor_mutable_data(read_only, &writable);
  EXPECT(max_status_code(status) == MAX_STATUS_FAILED_PRECONDITION && writable == NULL,
         "mutable_data of a read-only tensor to fail");
  printf("mutable_data of a read-only tensor: %s\n", max_status_message(status));
  max_status_release(status);

  /* 7. Releases: the borrowed memory is given back exactly once, after its last view. */
  max_tensor_release(read_only);
  max_tensor_release(as_bytes);
  max_tensor_release(as_int);
  max_tensor_release(copy);
  EXPECT(released == 0, "the borrowed memory to stay in use while its view lives");
  max_tensor_release(transposed);
  EXPECT(released == 1, "the release callback to run exactly once");
  max_tensor_release(zeros);

  printf("tensors OK\n");
  return 0;
}
