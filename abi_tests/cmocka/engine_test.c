/* The engine through the ABI, as a C program uses it: compile a graph, bind weights, execute
 * (by position and by name), read the signature, reload weights, survive bad inputs, and
 * serve many threads at once, capture and replay. The model throughout:
 *
 *   y = relu(x @ w + b) * 2        x: float32 [batch, 4], w: weight [4, 3], b: weight [3]
 *   s = x + x                      a second output that reads the input alone
 */
#include "abi_test.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define IN 4
#define OUT 3

static max_context_t* g_context;
static max_compiled_model_t* g_compiled;
static max_model_t* g_model;
static float g_w[IN * OUT], g_b[OUT];

static max_value_t* op(max_graph_t* g, const char* name, max_value_t* a, max_value_t* b) {
  max_value_t* inputs[2] = {a, b};
  max_value_t* out = NULL;
  size_t n = 0;
  EXPECT_OK(max_graph_add_op(g, name, 0, inputs, b ? 2 : 1, NULL, &out, 1, &n));
  return out;
}

static max_graph_t* build_graph(void) {
  max_graph_t* g = NULL;
  const max_dim_t x_dims[2] = {{0, "batch"}, {IN, NULL}};
  const max_dim_t w_dims[2] = {{IN, NULL}, {OUT, NULL}};
  const max_dim_t b_dims[1] = {{OUT, NULL}};
  const float two = 2.0f;
  const int64_t scalar_dims[1] = {0};
  max_value_t *x, *w, *b, *c, *y, *s;
  max_tensor_t* two_t = NULL;
  const char* names[2] = {"y", "s"};
  max_value_t* outs[2];
  EXPECT_OK(max_graph_create("engine_test", &g));
  EXPECT_OK(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));
  EXPECT_OK(max_graph_add_weight(g, "w", MAX_DTYPE_FLOAT32, w_dims, 2, MAX_DEVICE_REF_CPU, 0, &w));
  EXPECT_OK(max_graph_add_weight(g, "b", MAX_DTYPE_FLOAT32, b_dims, 1, MAX_DEVICE_REF_CPU, 0, &b));
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, scalar_dims, 0, &two, sizeof two, &two_t));
  EXPECT_OK(max_graph_add_constant(g, two_t, &c));
  max_tensor_release(two_t);
  y = op(g, "mul", op(g, "relu", op(g, "add", op(g, "matmul", x, w), b), NULL), c);
  s = op(g, "add", x, x);
  outs[0] = y;
  outs[1] = s;
  EXPECT_OK(max_graph_set_outputs(g, outs, names, 2));
  return g;
}

static max_tensor_t* f32(const int64_t* dims, int32_t rank, const float* values) {
  size_t n = 1;
  int32_t i;
  max_tensor_t* t = NULL;
  for (i = 0; i < rank; ++i) n *= (size_t)dims[i];
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, rank, values, n * sizeof(float), &t));
  return t;
}

static max_model_t* make_model(max_compiled_model_t* compiled, const float* w, const float* b) {
  const int64_t w_dims[2] = {IN, OUT}, b_dims[1] = {OUT};
  max_tensor_t* tensors[2];
  const char* names[2] = {"w", "b"};
  max_model_t* m = NULL;
  tensors[0] = f32(w_dims, 2, w);
  tensors[1] = f32(b_dims, 1, b);
  EXPECT_OK(max_model_create(compiled, names, tensors, 2, &m));
  max_tensor_release(tensors[0]);
  max_tensor_release(tensors[1]);
  return m;
}

/* The reference: relu(x @ w + b) * 2 for `rows` rows. */
static void reference(const float* x, int64_t rows, const float* w, const float* b, float* y) {
  int64_t r;
  int i, j;
  for (r = 0; r < rows; ++r)
    for (j = 0; j < OUT; ++j) {
      float acc = b[j];
      for (i = 0; i < IN; ++i) acc += x[r * IN + i] * w[i * OUT + j];
      y[r * OUT + j] = 2.0f * (acc > 0 ? acc : 0);
    }
}

static void input_rows(int64_t rows, float* x) {
  int64_t i;
  for (i = 0; i < rows * IN; ++i) x[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
}

/* Executes on `rows` rows and checks both outputs against the reference. */
static void check_rows(max_model_t* m, int64_t rows, const float* w, const float* b) {
  float x[64 * IN], want[64 * OUT], got[64 * OUT], sum[64 * IN];
  const int64_t dims[2] = {rows, IN};
  max_tensor_t* in;
  max_tensor_list_t* outs = NULL;
  max_tensor_t *y = NULL, *s = NULL;
  size_t n = 0;
  int64_t i;
  input_rows(rows, x);
  reference(x, rows, w, b, want);
  in = f32(dims, 2, x);
  EXPECT_OK(max_model_execute(m, &in, 1, &outs));
  EXPECT_OK(max_tensor_list_size(outs, &n));
  assert_int_equal(n, 2);
  EXPECT_OK(max_tensor_list_get(outs, 0, &y));
  EXPECT_OK(max_tensor_list_get(outs, 1, &s));
  EXPECT_OK(max_tensor_to_host(y, got, (size_t)rows * OUT * sizeof(float)));
  for (i = 0; i < rows * OUT; ++i)
    if (fabsf(got[i] - want[i]) > 1e-5f) fail_msg("rows %d: y[%d] = %g, expected %g", (int)rows, (int)i, got[i], want[i]);
  EXPECT_OK(max_tensor_to_host(s, sum, (size_t)rows * IN * sizeof(float)));
  for (i = 0; i < rows * IN; ++i) assert_true(sum[i] == x[i] + x[i]);
  max_tensor_release(y);
  max_tensor_release(s);
  max_tensor_list_release(outs);
  max_tensor_release(in);
}

static int setup(void** state) {
  max_graph_t* g;
  int i;
  (void)state;
  for (i = 0; i < IN * OUT; ++i) g_w[i] = (float)(i % 5) * 0.5f - 1.0f;
  for (i = 0; i < OUT; ++i) g_b[i] = 0.25f * (float)i - 0.25f;
  if (max_context_create(NULL, &g_context)) return -1;
  g = build_graph();
  if (max_context_compile(g_context, g, NULL, &g_compiled)) return -1;
  max_graph_release(g); /* the compiled model does not need the graph */
  g_model = make_model(g_compiled, g_w, g_b);
  return g_model ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  max_model_release(g_model);
  max_compiled_model_release(g_compiled);
  max_context_release(g_context);
  return 0;
}

/* One compiled model runs batch 1, 7 and 64 (and 7 again, from the plan cache). */
static void symbolic_batch(void** state) {
  (void)state;
  check_rows(g_model, 1, g_w, g_b);
  check_rows(g_model, 7, g_w, g_b);
  check_rows(g_model, 64, g_w, g_b);
  check_rows(g_model, 7, g_w, g_b);
}

static void signature(void** state) {
  size_t n = 0, rank = 0;
  max_tensor_spec_t* spec = NULL;
  const char* name = NULL;
  max_dtype_t dtype = 0;
  int64_t dim = 0;
  max_device_t* device = NULL;
  int32_t is_host = 0;
  (void)state;
  EXPECT_OK(max_compiled_model_num_inputs(g_compiled, &n));
  assert_int_equal(n, 1);
  EXPECT_OK(max_compiled_model_input(g_compiled, 0, &spec));
  EXPECT_OK(max_tensor_spec_name(spec, &name));
  assert_string_equal(name, "x");
  EXPECT_OK(max_tensor_spec_dtype(spec, &dtype));
  assert_int_equal(dtype, MAX_DTYPE_FLOAT32);
  EXPECT_OK(max_tensor_spec_rank(spec, &rank));
  assert_int_equal(rank, 2);
  EXPECT_OK(max_tensor_spec_dim(spec, 0, &dim, &name));
  assert_int_equal(dim, -1);
  assert_string_equal(name, "batch");
  EXPECT_OK(max_tensor_spec_dim(spec, 1, &dim, &name));
  assert_int_equal(dim, IN);
  assert_null(name);
  EXPECT_OK(max_tensor_spec_device(spec, &device));
  EXPECT_OK(max_device_is_host(device, &is_host));
  assert_true(is_host);
  max_device_release(device);
  max_tensor_spec_release(spec);

  EXPECT_OK(max_compiled_model_num_outputs(g_compiled, &n));
  assert_int_equal(n, 2);
  EXPECT_OK(max_compiled_model_output(g_compiled, 1, &spec));
  EXPECT_OK(max_tensor_spec_name(spec, &name));
  assert_string_equal(name, "s");
  max_tensor_spec_release(spec);

  EXPECT_OK(max_compiled_model_num_weights(g_compiled, &n));
  assert_int_equal(n, 2);
  EXPECT_OK(max_compiled_model_weight(g_compiled, 0, &spec));
  EXPECT_OK(max_tensor_spec_name(spec, &name));
  assert_true(strcmp(name, "w") == 0 || strcmp(name, "b") == 0);
  max_tensor_spec_release(spec);
}

static void execute_by_name(void** state) {
  float x[2 * IN];
  const int64_t dims[2] = {2, IN};
  const char* names[1] = {"x"};
  max_tensor_t* in;
  max_tensor_list_t* outs = NULL;
  size_t n = 0;
  (void)state;
  input_rows(2, x);
  in = f32(dims, 2, x);
  EXPECT_OK(max_model_execute_named(g_model, names, &in, 1, &outs));
  EXPECT_OK(max_tensor_list_size(outs, &n));
  assert_int_equal(n, 2);
  max_tensor_list_release(outs);
  max_tensor_release(in);
}

/* Every bad input is refused before anything runs, and the model still works afterwards. */
static void bad_inputs_leave_the_model_usable(void** state) {
  const int64_t wrong_rank[1] = {IN}, wrong_dim[2] = {2, IN + 1};
  float zeros[2 * (IN + 1)] = {0};
  int64_t dims64[2] = {2, IN};
  max_tensor_t *rank1 = f32(wrong_rank, 1, zeros), *dim5 = f32(wrong_dim, 2, zeros), *i64 = NULL;
  max_tensor_list_t* outs = SENTINEL_PTR;
  (void)state;
  EXPECT_OK(max_tensor_create(NULL, MAX_DTYPE_INT64, dims64, 2, &i64));
  EXPECT_STATUS(max_model_execute(g_model, &rank1, 1, &outs), MAX_STATUS_INVALID_ARGUMENT,
                "input 0 'x'", "rank is 1", "expects 2");
  assert_null(outs);
  EXPECT_STATUS(max_model_execute(g_model, &dim5, 1, &outs), MAX_STATUS_INVALID_ARGUMENT,
                "input 0 'x'", "dim 1 is 5", "expects 4");
  EXPECT_STATUS(max_model_execute(g_model, &i64, 1, &outs), MAX_STATUS_INVALID_ARGUMENT,
                "input 0 'x'", "int64", "float32");
  max_tensor_release(rank1);
  max_tensor_release(dim5);
  max_tensor_release(i64);
  check_rows(g_model, 3, g_w, g_b);
}

/* Two inputs that must agree on "n". */
static void symbols_must_agree(void** state) {
  max_graph_t* g = NULL;
  const max_dim_t dims[1] = {{0, "n"}};
  max_value_t *a, *b, *sum;
  max_compiled_model_t* c = NULL;
  max_model_t* m = NULL;
  const int64_t three[1] = {3}, four[1] = {4};
  const float v[4] = {1, 2, 3, 4};
  max_tensor_t* ins[2];
  max_tensor_list_t* outs = SENTINEL_PTR;
  (void)state;
  EXPECT_OK(max_graph_create("agree", &g));
  EXPECT_OK(max_graph_add_input(g, "a", MAX_DTYPE_FLOAT32, dims, 1, MAX_DEVICE_REF_CPU, 0, &a));
  EXPECT_OK(max_graph_add_input(g, "b", MAX_DTYPE_FLOAT32, dims, 1, MAX_DEVICE_REF_CPU, 0, &b));
  sum = op(g, "add", a, b);
  EXPECT_OK(max_graph_set_outputs(g, &sum, NULL, 1));
  EXPECT_OK(max_context_compile(g_context, g, NULL, &c));
  EXPECT_OK(max_model_create(c, NULL, NULL, 0, &m));
  ins[0] = f32(three, 1, v);
  ins[1] = f32(four, 1, v);
  EXPECT_STATUS(max_model_execute(m, ins, 2, &outs), MAX_STATUS_INVALID_ARGUMENT, "input 1 'b'",
                "dim 0 is 4", "'n' is 3", "input 0 'a'");
  assert_null(outs);
  max_tensor_release(ins[1]);
  ins[1] = f32(three, 1, v);
  EXPECT_OK(max_model_execute(m, ins, 2, &outs));
  max_tensor_list_release(outs);
  max_tensor_release(ins[0]);
  max_tensor_release(ins[1]);
  max_model_release(m);
  max_compiled_model_release(c);
  max_graph_release(g);
}

static void weights_are_checked(void** state) {
  const int64_t w_dims[2] = {IN, OUT}, bad_dims[2] = {OUT, IN};
  max_tensor_t* w = f32(w_dims, 2, g_w);
  max_tensor_t* bad = f32(bad_dims, 2, g_w);
  const char* only_w[1] = {"w"};
  max_model_t* m = SENTINEL_PTR;
  (void)state;
  EXPECT_STATUS(max_model_create(g_compiled, only_w, &w, 1, &m), MAX_STATUS_NOT_FOUND, "weight 'b'",
                "not given");
  assert_null(m);
  EXPECT_STATUS(max_model_create(g_compiled, only_w, &bad, 1, &m), MAX_STATUS_INVALID_ARGUMENT,
                "weight 'w'", "[3, 4]", "[4, 3]");
  max_tensor_release(w);
  max_tensor_release(bad);
}

/* reload swaps the weights of a live model; the compiled model is not touched. */
static void reload_weights(void** state) {
  float w2[IN * OUT], b2[OUT];
  const int64_t w_dims[2] = {IN, OUT}, b_dims[1] = {OUT};
  const char* names[2] = {"w", "b"};
  max_tensor_t* tensors[2];
  max_model_t* m = make_model(g_compiled, g_w, g_b);
  int i;
  (void)state;
  for (i = 0; i < IN * OUT; ++i) w2[i] = -g_w[i];
  for (i = 0; i < OUT; ++i) b2[i] = 1.0f;
  tensors[0] = f32(w_dims, 2, w2);
  tensors[1] = f32(b_dims, 1, b2);
  EXPECT_OK(max_model_reload(m, names, tensors, 2));
  check_rows(m, 5, w2, b2);
  max_tensor_release(tensors[0]);
  max_tensor_release(tensors[1]);
  check_rows(g_model, 5, g_w, g_b); /* the other model kept its weights */
  max_model_release(m);
}

/* 8 threads x 200 executes on one model: every result equals the single-threaded one. */
#define THREADS 8
#define CALLS 200
static float g_expected[16 * OUT];

static void* worker(void* arg) {
  float x[16 * IN], got[16 * OUT];
  const int64_t dims[2] = {16, IN};
  max_tensor_t* in = NULL;
  int k;
  long bad = 0;
  (void)arg;
  input_rows(16, x);
  if (max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, x, sizeof x, &in)) return (void*)1;
  for (k = 0; k < CALLS; ++k) {
    max_tensor_list_t* outs = NULL;
    max_tensor_t* y = NULL;
    max_status_t* s = max_model_execute(g_model, &in, 1, &outs);
    if (s) {
      max_status_release(s);
      ++bad;
      continue;
    }
    if (max_tensor_list_get(outs, 0, &y) || max_tensor_to_host(y, got, sizeof got) ||
        memcmp(got, g_expected, sizeof got) != 0)
      ++bad;
    max_tensor_release(y);
    max_tensor_list_release(outs);
  }
  max_tensor_release(in);
  return (void*)bad;
}

static void concurrent_executes(void** state) {
  float x[16 * IN];
  pthread_t threads[THREADS];
  int t;
  long bad = 0;
  (void)state;
  input_rows(16, x);
  reference(x, 16, g_w, g_b, g_expected);
  for (t = 0; t < THREADS; ++t) assert_int_equal(pthread_create(&threads[t], NULL, worker, NULL), 0);
  for (t = 0; t < THREADS; ++t) {
    void* r = NULL;
    pthread_join(threads[t], &r);
    bad += (long)r;
  }
  assert_int_equal(bad, 0);
}

/* Reads y (output 0) of `outs` and checks it against the reference for `x`. */
static void check_y(max_tensor_list_t* outs, const float* x, int64_t rows) {
  float want[8 * OUT], got[8 * OUT];
  max_tensor_t* y = NULL;
  int64_t i;
  reference(x, rows, g_w, g_b, want);
  EXPECT_OK(max_tensor_list_get(outs, 0, &y));
  EXPECT_OK(max_tensor_to_host(y, got, (size_t)rows * OUT * sizeof(float)));
  for (i = 0; i < rows * OUT; ++i)
    if (fabsf(got[i] - want[i]) > 1e-5f) fail_msg("y[%d] = %g, expected %g", (int)i, got[i], want[i]);
  max_tensor_release(y);
}

/* ABI 1.4: a capture's outputs are rewritten in place by every replay of its key. */
static void capture_and_replay(void** state) {
  float a[2 * IN], b[2 * IN], c[3 * IN] = {0};
  const int64_t dims[2] = {2, IN}, wide_dims[2] = {3, IN};
  const uint64_t key = 42, keys2[2] = {42, 42};
  max_tensor_t *in_a, *in_b, *wide;
  max_tensor_list_t* outs = NULL;
  int64_t i;
  (void)state;
  input_rows(2, a);
  for (i = 0; i < 2 * IN; ++i) b[i] = -a[i] + 0.5f;
  in_a = f32(dims, 2, a);
  in_b = f32(dims, 2, b);
  wide = f32(wide_dims, 2, c);
  EXPECT_STATUS(max_model_replay(g_model, &key, 1, &in_a, 1), MAX_STATUS_FAILED_PRECONDITION, "graph key 42");
  EXPECT_INVALID(max_model_capture(g_model, keys2, 2, &in_a, 1, &outs), "graph_keys has 2 keys");
  EXPECT_INVALID(max_model_capture(g_model, NULL, 1, &in_a, 1, &outs), "graph_keys is NULL");
  EXPECT_OK(max_model_capture(g_model, &key, 1, &in_a, 1, &outs));
  check_y(outs, a, 2);
  EXPECT_OK(max_model_replay(g_model, &key, 1, &in_b, 1));
  check_y(outs, b, 2);
  EXPECT_OK(max_model_debug_verify_replay(g_model, &key, 1, &in_b, 1));
  EXPECT_INVALID(max_model_replay(g_model, &key, 1, &wide, 1), "batch=3", "batch=2");
  check_y(outs, b, 2); /* a refused replay leaves the outputs as they were */
  max_tensor_list_release(outs);
  EXPECT_OK(max_model_replay(g_model, &key, 1, &in_a, 1)); /* the graph holds its own outputs */
  max_tensor_release(in_a);
  max_tensor_release(in_b);
  max_tensor_release(wide);
}

/* ABI 1.5: options.file_device moves a model file wholly on the host onto that device before
 * it compiles; a file that already places a value elsewhere is refused, naming the device. */
static void file_device_places_a_model_file(void** state) {
  char host_path[64], gpu_path[64];
  max_graph_t* g = build_graph();
  max_graph_t* on_gpu = NULL;
  const max_dim_t dims[1] = {{2, NULL}};
  max_value_t *x, *y;
  max_device_t* cpu = NULL;
  max_compile_options_t o;
  max_compiled_model_t* c = NULL;
  max_tensor_spec_t* spec = NULL;
  max_device_t* where = NULL;
  int32_t is_host = 0;
  (void)state;
  snprintf(host_path, sizeof host_path, "/tmp/max_c_engine_test_%d.maxg", (int)getpid());
  snprintf(gpu_path, sizeof gpu_path, "/tmp/max_c_engine_test_gpu_%d.maxg", (int)getpid());
  EXPECT_OK(max_graph_save(g, host_path));
  max_graph_release(g);
  EXPECT_OK(max_graph_create("on_gpu", &on_gpu));
  EXPECT_OK(max_graph_add_input(on_gpu, "x", MAX_DTYPE_FLOAT32, dims, 1, MAX_DEVICE_REF_GPU, 0, &x));
  y = op(on_gpu, "add", x, x);
  EXPECT_OK(max_graph_set_outputs(on_gpu, &y, NULL, 1));
  EXPECT_OK(max_graph_save(on_gpu, gpu_path));
  max_graph_release(on_gpu);

  EXPECT_OK(max_device_create(MAX_DEVICE_KIND_CPU, 0, &cpu));
  EXPECT_OK(max_compile_options_init(&o, sizeof o));
  assert_null(o.file_device);
  o.file_device = cpu;
  EXPECT_OK(max_context_compile_file(g_context, host_path, &o, &c));
  EXPECT_OK(max_compiled_model_input(c, 0, &spec));
  EXPECT_OK(max_tensor_spec_device(spec, &where));
  EXPECT_OK(max_device_is_host(where, &is_host));
  assert_int_equal(is_host, 1);
  max_device_release(where);
  max_tensor_spec_release(spec);
  max_compiled_model_release(c);
  c = SENTINEL_PTR;
  EXPECT_STATUS(max_context_compile_file(g_context, gpu_path, &o, &c), MAX_STATUS_FAILED_PRECONDITION,
                "already placed on gpu:0");
  assert_null(c);
  max_device_release(cpu);
  remove(host_path);
  remove(gpu_path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(symbolic_batch),       cmocka_unit_test(signature),
      cmocka_unit_test(execute_by_name),      cmocka_unit_test(bad_inputs_leave_the_model_usable),
      cmocka_unit_test(symbols_must_agree),   cmocka_unit_test(weights_are_checked),
      cmocka_unit_test(reload_weights),       cmocka_unit_test(concurrent_executes),
      cmocka_unit_test(capture_and_replay),   cmocka_unit_test(file_device_places_a_model_file),
  };
  return cmocka_run_group_tests_name("engine", tests, setup, teardown);
}
