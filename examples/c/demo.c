/*
 * demo.c -- the README's demo: what libmax_c can do today, through the public ABI only.
 *
 * The demo is a list of steps (see `steps` at the bottom). Each step takes the shared state,
 * prints what it does and returns 0, or prints why and returns non-zero. The main one builds
 * a two-layer MLP with a symbolic batch through the graph ABI, compiles it, binds its weights
 * and executes it, checking the output against a plain C loop and timing it.
 *
 *   y = softmax(gelu(x @ w1 + b1) @ w2 + b2)     x: float32 [batch, 256], hidden 1024, out 64
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "example_check.h"
#include "max_c.h"

enum { kIn = 256, kHidden = 1024, kOut = 64 };

typedef struct demo_state {
  max_context_t* context;
  max_device_t* device; /* the context's first device */
  max_model_t* model;
  float* w1; /* the weights, kept for the reference computation */
  float* b1;
  float* w2;
  float* b2;
} demo_state;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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

/* ---- the model ---- */

static max_value_t* op(max_graph_t* graph, const char* name, max_value_t* a, max_value_t* b,
                       const max_attrs_t* attrs) {
  max_value_t* inputs[2] = {a, b};
  max_value_t* out = NULL;
  size_t count = 0;
  CHECK(max_graph_add_op(graph, name, 0, inputs, b ? 2 : 1, attrs, &out, 1, &count));
  return out;
}

static max_value_t* weight(max_graph_t* graph, const char* name, int64_t rows, int64_t cols) {
  max_dim_t dims[2] = {{rows, NULL}, {cols, NULL}};
  max_value_t* w = NULL;
  CHECK(max_graph_add_weight(graph, name, MAX_DTYPE_FLOAT32, rows ? dims : dims + 1, rows ? 2 : 1,
                             MAX_DEVICE_REF_CPU, 0, &w));
  return w;
}

static float* random_floats(size_t n, float scale, unsigned seed) {
  float* p = malloc(n * sizeof(float));
  if (!p) return NULL;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * scale;
  }
  return p;
}

static int step_build_and_compile(demo_state* state) {
  max_graph_t* graph = NULL;
  CHECK(max_graph_create("mlp", &graph));
  const max_dim_t x_dims[2] = {{0, "batch"}, {kIn, NULL}};
  max_value_t* x = NULL;
  CHECK(max_graph_add_input(graph, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));
  max_value_t* h = op(graph, "gelu", op(graph, "add", op(graph, "matmul", x, weight(graph, "w1", kIn, kHidden), NULL),
                                        weight(graph, "b1", 0, kHidden), NULL), NULL, NULL);
  max_value_t* logits = op(graph, "add", op(graph, "matmul", h, weight(graph, "w2", kHidden, kOut), NULL),
                           weight(graph, "b2", 0, kOut), NULL);
  max_value_t* y = op(graph, "softmax", logits, NULL, NULL);
  const char* out_name = "probs";
  CHECK(max_graph_set_outputs(graph, &y, &out_name, 1));
  size_t num_ops = 0;
  CHECK(max_graph_num_ops(graph, &num_ops));

  double t0 = now_ms();
  max_compiled_model_t* compiled = NULL;
  CHECK(max_context_compile(state->context, graph, NULL, &compiled));
  double t1 = now_ms();
  max_graph_release(graph); /* the compiled model does not keep it */
  printf("  built a graph of %zu ops; compiled in %.2f ms\n", num_ops, t1 - t0);

  state->w1 = random_floats((size_t)kIn * kHidden, 0.125f, 1);
  state->b1 = random_floats(kHidden, 0.1f, 2);
  state->w2 = random_floats((size_t)kHidden * kOut, 0.0625f, 3);
  state->b2 = random_floats(kOut, 0.1f, 4);
  EXPECT(state->w1 && state->b1 && state->w2 && state->b2, "host memory for the weights");
  const int64_t w1_dims[2] = {kIn, kHidden}, b1_dims[1] = {kHidden}, w2_dims[2] = {kHidden, kOut},
                b2_dims[1] = {kOut};
  const char* names[4] = {"w1", "b1", "w2", "b2"};
  max_tensor_t* weights[4] = {NULL, NULL, NULL, NULL};
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, w1_dims, 2, NULL, state->w1, 1, NULL, NULL, &weights[0]));
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, b1_dims, 1, NULL, state->b1, 1, NULL, NULL, &weights[1]));
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, w2_dims, 2, NULL, state->w2, 1, NULL, NULL, &weights[2]));
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, b2_dims, 1, NULL, state->b2, 1, NULL, NULL, &weights[3]));
  CHECK(max_model_create(compiled, names, weights, 4, &state->model));
  for (int i = 0; i < 4; ++i) max_tensor_release(weights[i]); /* the model holds them now */

  max_tensor_spec_t* spec = NULL;
  const char* in_name = NULL;
  const char* dim_name = NULL;
  int64_t dim0 = 0;
  CHECK(max_compiled_model_input(compiled, 0, &spec));
  CHECK(max_tensor_spec_name(spec, &in_name));
  CHECK(max_tensor_spec_dim(spec, 0, &dim0, &dim_name));
  printf("  model input '%s': float32 [%s, %d] (dim 0 is %lld: symbolic); weights bound by name, zero-copy\n",
         in_name, dim_name, kIn, (long long)dim0);
  max_tensor_spec_release(spec);
  max_compiled_model_release(compiled); /* the model keeps it alive */
  return 0;
}

/* The same model in plain C, row by row. */
static void reference(const demo_state* s, const float* x, float* y) {
  static float h[kHidden];
  for (int j = 0; j < kHidden; ++j) {
    double acc = s->b1[j];
    for (int i = 0; i < kIn; ++i) acc += (double)x[i] * s->w1[(size_t)i * kHidden + j];
    h[j] = (float)(0.5 * acc * (1.0 + erf(acc / sqrt(2.0))));
  }
  double m = -1e300, sum = 0, logits[kOut];
  for (int j = 0; j < kOut; ++j) {
    double acc = s->b2[j];
    for (int i = 0; i < kHidden; ++i) acc += (double)h[i] * s->w2[(size_t)i * kOut + j];
    logits[j] = acc;
    if (acc > m) m = acc;
  }
  for (int j = 0; j < kOut; ++j) sum += exp(logits[j] - m);
  for (int j = 0; j < kOut; ++j) y[j] = (float)(exp(logits[j] - m) / sum);
}

/* Runs `batch` rows; returns the best time of `repeats` calls in ms, or a negative number. */
static double run_batch(demo_state* state, int64_t batch, int repeats, int check) {
  float* x = random_floats((size_t)batch * kIn, 2.0f, 10 + (unsigned)batch);
  float* y = malloc((size_t)batch * kOut * sizeof(float));
  if (!x || !y) return -1;
  const int64_t dims[2] = {batch, kIn};
  max_tensor_t* input = NULL;
  CHECK(max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, 2, NULL, x, 1, NULL, NULL, &input));
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    max_tensor_list_t* outputs = NULL;
    double t0 = now_ms();
    CHECK(max_model_execute(state->model, &input, 1, &outputs));
    double t1 = now_ms();
    if (t1 - t0 < best) best = t1 - t0;
    if (r == 0) {
      max_tensor_t* out = NULL;
      CHECK(max_tensor_list_get(outputs, 0, &out));
      CHECK(max_tensor_to_host(out, y, (size_t)batch * kOut * sizeof(float)));
      max_tensor_release(out);
    }
    max_tensor_list_release(outputs);
  }
  max_tensor_release(input);
  double max_err = 0;
  float want[kOut];
  for (int64_t r = 0; r < (check ? batch : 0); ++r) {
    reference(state, x + r * kIn, want);
    for (int j = 0; j < kOut; ++j) {
      double e = fabs((double)want[j] - y[r * kOut + j]);
      if (e > max_err) max_err = e;
    }
  }
  if (check) printf("  batch %3lld: probs[0][0..3] = %.5f %.5f %.5f %.5f, max |error| vs plain C %.2e\n",
                    (long long)batch, y[0], y[1], y[2], y[3], max_err);
  free(x);
  free(y);
  return (check && max_err > 1e-4) ? -1 : best;
}

static int step_execute(demo_state* state) {
  const int64_t batches[3] = {1, 7, 64};
  for (int i = 0; i < 3; ++i) EXPECT(run_batch(state, batches[i], 1, 1) >= 0, "the output to match the reference");
  return 0;
}

static int step_timing(demo_state* state) {
  const int64_t batches[3] = {1, 16, 64};
  for (int i = 0; i < 3; ++i) {
    double ms = run_batch(state, batches[i], 50, 0);
    EXPECT(ms >= 0, "the timed runs to succeed");
    double gflops = 2.0 * (double)batches[i] * (kIn * kHidden + kHidden * kOut) / (ms * 1e6);
    printf("  batch %3lld: best of 50 executes %.3f ms (%.1f GFLOP/s)\n", (long long)batches[i], ms, gflops);
  }
  return 0;
}

/* A bad input is refused with a message naming it; the model stays usable. */
static int step_bad_input(demo_state* state) {
  const int64_t dims[2] = {2, kIn + 1};
  max_tensor_t* wrong = NULL;
  CHECK(max_tensor_create(state->device, MAX_DTYPE_FLOAT32, dims, 2, &wrong));
  max_tensor_list_t* outputs = NULL;
  max_status_t* status = max_model_execute(state->model, &wrong, 1, &outputs);
  EXPECT(status != NULL && outputs == NULL, "the wrong shape to be refused");
  printf("  execute(float32[2, %d]) -> %s: %s\n", kIn + 1, max_status_code_name(max_status_code(status)),
         max_status_message(status));
  max_status_release(status);
  max_tensor_release(wrong);
  EXPECT(run_batch(state, 3, 1, 1) >= 0, "the model to work after the refusal");
  return 0;
}

typedef struct demo_step {
  const char* title;
  int (*run)(demo_state* state);
} demo_step;

static const demo_step steps[] = {
    {"library and ABI version", step_version},
    {"context and devices", step_context},
    {"build an MLP through the graph ABI, compile it, bind its weights", step_build_and_compile},
    {"execute batch 1, 7 and 64 with one compiled model", step_execute},
    {"timing", step_timing},
    {"bad input: a clear status, and the model stays usable", step_bad_input},
    {"DLPack round trip", step_dlpack},
    {"errors are statuses with messages", step_errors},
};

int main(void) {
  demo_state state = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};
  int failed = 0;
  const size_t n = sizeof(steps) / sizeof(steps[0]);
  for (size_t i = 0; i < n && !failed; ++i) {
    printf("[step %zu/%zu] %s\n", i + 1, n, steps[i].title);
    failed = steps[i].run(&state);
  }
  max_model_release(state.model);
  free(state.w1);
  free(state.b1);
  free(state.w2);
  free(state.b2);
  max_device_release(state.device);
  max_context_release(state.context);
  printf(failed ? "demo FAILED\n" : "demo OK\n");
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
