/*
 * demo.c -- the README's demo: what libmax_c can do today, through the public ABI only.
 *
 * The demo is a list of steps (see `steps` at the bottom). Each step takes the shared state,
 * prints what it does and returns 0, or prints why and returns non-zero. When models can be
 * built, compiled and executed, the tensor steps give way to those: add a step, keep the rest.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "example_check.h"
#include "max_c.h"

typedef struct demo_state {
  max_context_t* context;
  max_device_t* device; /* the context's first device */
} demo_state;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void print_tensor(const char* name, max_tensor_t* tensor) {
  max_dtype_t dtype;
  int32_t rank, contiguous;
  const int64_t *dims, *strides;
  CHECK(max_tensor_dtype(tensor, &dtype));
  CHECK(max_tensor_rank(tensor, &rank));
  CHECK(max_tensor_dims(tensor, &dims));
  CHECK(max_tensor_strides(tensor, &strides));
  CHECK(max_tensor_is_contiguous(tensor, &contiguous));
  printf("  %-10s %s[", name, max_dtype_name(dtype));
  for (int32_t i = 0; i < rank; ++i) printf("%s%lld", i ? ", " : "", (long long)dims[i]);
  printf("] strides [");
  for (int32_t i = 0; i < rank; ++i) printf("%s%lld", i ? ", " : "", (long long)strides[i]);
  printf("]%s", contiguous ? "" : " (strided)");
  if (dtype == MAX_DTYPE_FLOAT32) {
    int64_t n;
    CHECK(max_tensor_num_elements(tensor, &n));
    float values[16];
    if (n <= 16) {
      CHECK(max_tensor_to_host(tensor, values, (size_t)n * sizeof(float)));
      printf(" =");
      for (int64_t i = 0; i < n; ++i) printf(" %g", values[i]);
    }
  }
  printf("\n");
}

/* ---- the steps ---- */

static int step_version(demo_state* state) {
  (void)state;
  uint32_t abi = max_abi_version();
  printf("  libmax_c %s, ABI %u.%u (this program was built against %u.%u)\n",
         max_version_string(), abi >> 16, abi & 0xffffu, MAX_ABI_VERSION_MAJOR,
         MAX_ABI_VERSION_MINOR);
  CHECK(max_check_abi(MAX_ABI_VERSION));
  printf("  max_check_abi: compatible\n");
  return 0;
}

static int step_context(demo_state* state) {
  max_context_options_t options;
  CHECK(max_context_options_init(&options, sizeof(options)));
  options.num_threads = 0; /* one per core */
  CHECK(max_context_create(&options, &state->context));

  int32_t threads, accelerators;
  size_t num_devices;
  CHECK(max_context_num_threads(state->context, &threads));
  CHECK(max_context_num_devices(state->context, &num_devices));
  CHECK(max_accelerator_count(&accelerators));
  printf("  context: %d thread(s), %zu device(s); %d accelerator(s) visible\n", threads,
         num_devices, accelerators);
  for (size_t i = 0; i < num_devices; ++i) {
    max_device_t* device;
    const char *label, *api;
    int32_t id, is_host;
    CHECK(max_context_device(state->context, i, &device));
    CHECK(max_device_label(device, &label));
    CHECK(max_device_api(device, &api));
    CHECK(max_device_id(device, &id));
    CHECK(max_device_is_host(device, &is_host));
    printf("  device %zu: %s:%d (api %s%s)\n", i, label, id, api, is_host ? ", host" : "");
    if (i == 0)
      state->device = device;
    else
      max_device_release(device);
  }
  return 0;
}

static int step_tensors(demo_state* state) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {2, 3};
  max_tensor_t* a;
  CHECK(max_tensor_create_from_host(state->device, MAX_DTYPE_FLOAT32, dims, 2, values,
                                    sizeof(values), &a));
  print_tensor("a", a);

  /* The transpose of a, as a borrowed strided view of the same host memory. */
  const int64_t tdims[2] = {3, 2}, tstrides[2] = {1, 3};
  const void* data;
  CHECK(max_tensor_data(a, &data));
  max_tensor_t* at;
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, tdims, 2, tstrides, (void*)data, 1, NULL,
                                   NULL, &at));
  print_tensor("a^T", at);

  max_tensor_t* c;
  CHECK(max_tensor_copy(at, NULL, &c));
  print_tensor("copy(a^T)", c);

  const int64_t flat[1] = {6};
  max_tensor_t* v;
  CHECK(max_tensor_view(c, MAX_DTYPE_FLOAT32, flat, 1, &v));
  print_tensor("view [6]", v);

  float out[6];
  CHECK(max_tensor_to_host(v, out, sizeof(out)));
  EXPECT(out[1] == 4.0f && out[2] == 2.0f, "the transpose's elements in row-major order");

  max_tensor_release(v);
  max_tensor_release(c);
  max_tensor_release(at); /* before a: it borrows a's memory */
  max_tensor_release(a);
  return 0;
}

static int step_dlpack(demo_state* state) {
  const int64_t dims[1] = {4};
  const int32_t values[4] = {10, 20, 30, 40};
  max_tensor_t* t;
  CHECK(max_tensor_create_from_host(state->device, MAX_DTYPE_INT32, dims, 1, values,
                                    sizeof(values), &t));
  DLManagedTensorVersioned* managed;
  CHECK(max_tensor_to_dlpack(t, &managed));
  printf("  exported: DLPack %u.%u, device %d, dtype code %u bits %u, ndim %d, strides [%lld]\n",
         managed->version.major, managed->version.minor, (int)managed->dl_tensor.device.device_type,
         managed->dl_tensor.dtype.code, managed->dl_tensor.dtype.bits, managed->dl_tensor.ndim,
         (long long)managed->dl_tensor.strides[0]);

  /* A consumer (here: max_c itself) takes the struct; it now owns it. */
  max_tensor_t* back;
  CHECK(max_tensor_from_dlpack(managed, &back));
  const void *p1, *p2;
  CHECK(max_tensor_data(t, &p1));
  CHECK(max_tensor_data(back, &p2));
  int32_t out[4];
  CHECK(max_tensor_to_host(back, out, sizeof(out)));
  EXPECT(p1 == p2, "the imported tensor to share the exported memory");
  EXPECT(memcmp(out, values, sizeof(out)) == 0, "the same values after the round trip");
  printf("  imported back: same memory (%s), values %d %d %d %d\n", p1 == p2 ? "zero-copy" : "?",
         out[0], out[1], out[2], out[3]);
  max_tensor_release(t);
  max_tensor_release(back); /* runs the export's deleter */
  return 0;
}

static int step_errors(demo_state* state) {
  /* A bad call: viewing 6 floats as 4. The library answers with a status, never a crash. */
  const int64_t dims[2] = {2, 3}, wrong[1] = {4};
  max_tensor_t* t;
  CHECK(max_tensor_create(state->device, MAX_DTYPE_FLOAT32, dims, 2, &t));
  max_tensor_t* v = (max_tensor_t*)&v; /* anything: it is set to NULL on failure */
  max_status_t* status = max_tensor_view(t, MAX_DTYPE_FLOAT32, wrong, 1, &v);
  EXPECT(status != NULL && v == NULL, "max_tensor_view to fail and clear its output");
  printf("  max_tensor_view(float32[2, 3] as [4]) -> %s: %s\n",
         max_status_code_name(max_status_code(status)), max_status_message(status));
  EXPECT(max_status_code(status) == MAX_STATUS_INVALID_ARGUMENT, "INVALID_ARGUMENT");
  max_status_release(status);

  /* A device this machine does not have. */
  max_device_t* gpu = NULL;
  status = max_device_create(MAX_DEVICE_KIND_CUDA, 7, &gpu);
  EXPECT(status != NULL && gpu == NULL, "no CUDA device 7");
  printf("  max_device_create(cuda, 7) -> %s: %s\n", max_status_code_name(max_status_code(status)),
         max_status_message(status));
  max_status_release(status);
  max_tensor_release(t);
  return 0;
}

static int step_timing(demo_state* state) {
  enum { kN = 1 << 20, kRepeats = 20 };
  const int64_t dims[1] = {kN};
  float* host = malloc(kN * sizeof(float));
  float* back = malloc(kN * sizeof(float));
  EXPECT(host && back, "host memory");
  for (int i = 0; i < kN; ++i) host[i] = (float)i * 0.5f;

  double best_create = 1e30, best_copy = 1e30, best_to_host = 1e30, best_total = 1e30;
  for (int r = 0; r < kRepeats; ++r) {
    max_tensor_t *t, *c;
    double t0 = now_ms();
    CHECK(max_tensor_create_from_host(state->device, MAX_DTYPE_FLOAT32, dims, 1, host,
                                      kN * sizeof(float), &t));
    double t1 = now_ms();
    CHECK(max_tensor_copy(t, NULL, &c));
    double t2 = now_ms();
    CHECK(max_tensor_to_host(c, back, kN * sizeof(float)));
    double t3 = now_ms();
    max_tensor_release(c);
    max_tensor_release(t);
    if (t1 - t0 < best_create) best_create = t1 - t0;
    if (t2 - t1 < best_copy) best_copy = t2 - t1;
    if (t3 - t2 < best_to_host) best_to_host = t3 - t2;
    if (t3 - t0 < best_total) best_total = t3 - t0;
  }
  EXPECT(memcmp(host, back, kN * sizeof(float)) == 0, "the values to survive create+copy+to_host");
  const double mib = kN * sizeof(float) / (1024.0 * 1024.0);
  printf("  1M float32 (%.0f MiB), best of %d: create_from_host %.3f ms, copy %.3f ms, "
         "to_host %.3f ms; create+copy+to_host %.3f ms\n",
         mib, kRepeats, best_create, best_copy, best_to_host, best_total);
  free(host);
  free(back);
  return 0;
}

typedef struct demo_step {
  const char* title;
  int (*run)(demo_state* state);
} demo_step;

static const demo_step steps[] = {
    {"library and ABI version", step_version},
    {"context and devices", step_context},
    {"tensors: create, strided view, copy, view", step_tensors},
    {"DLPack round trip", step_dlpack},
    {"errors are statuses with messages", step_errors},
    {"timing", step_timing},
};

int main(void) {
  demo_state state = {NULL, NULL};
  int failed = 0;
  const size_t n = sizeof(steps) / sizeof(steps[0]);
  for (size_t i = 0; i < n && !failed; ++i) {
    printf("[step %zu/%zu] %s\n", i + 1, n, steps[i].title);
    failed = steps[i].run(&state);
  }
  max_device_release(state.device);
  max_context_release(state.context);
  printf(failed ? "demo FAILED\n" : "demo OK\n");
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
