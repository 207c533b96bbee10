/* The smallest client of the installed libmax_c: check the ABI, make a tensor, read it. */
#include <stdio.h>

#include <max_c.h>

static int fail(max_status_t* status) {
  fprintf(stderr, "%s: %s\n", max_status_code_name(max_status_code(status)),
          max_status_message(status));
  max_status_release(status);
  return 1;
}

int main(void) {
  max_status_t* status = max_check_abi(MAX_ABI_VERSION);
  if (status) return fail(status);

  const int64_t dims[1] = {3};
  const float values[3] = {1.0f, 2.0f, 3.0f};
  max_tensor_t* tensor = NULL;
  status = max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 1, values, sizeof(values),
                                       &tensor);
  if (status) return fail(status);
  float out[3];
  status = max_tensor_to_host(tensor, out, sizeof(out));
  max_tensor_release(tensor);
  if (status) return fail(status);
  if (out[2] != 3.0f) {
    fprintf(stderr, "wrong value %g\n", out[2]);
    return 1;
  }
  printf("consumer: libmax_c %s found through find_package(max_c), ok\n", max_version_string());
  return 0;
}
