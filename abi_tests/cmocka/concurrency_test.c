/* Many callers at once, through the ABI, as a server uses it: threads executing one model
 * with their own inputs (batch sizes that evict each other's plans), several models at once,
 * weights reloaded (four at once, or under running calls) and models compiled and released
 * while others execute, one context and one weights registry shared by all, capture/replay
 * under per-thread keys, and tensors retained, viewed, copied and exchanged through DLPack
 * from several threads.
 *
 * Every result is checked against a reference computed on one thread before any worker
 * starts: the model's own output, byte for byte (concurrency must not change one bit), which
 * was itself checked against plain C arithmetic. cmocka's assertions are not thread-safe, so
 * workers only count failures and keep the first message; the main thread asserts.
 *
 * The ordinary ctest runs this suite; `bash scripts/test.sh tsan` runs it built with
 * ThreadSanitizer, where MAX_C_TEST_NUM_THREADS=3 gives every context a pool of three (see
 * the tsan preset in CMakePresets.json). The models:
 *
 *   mlp:   y = softmax(relu(x @ w1 + b1) @ w2 + b2)      x: float32 [batch, 16]
 *   conv:  y = relu(conv2d(x, f, bias, padding 1))       x: float32 [1, 6, 6, 4] NHWC
 *   poly:  y = x * x + x, s = sum(x)                     x: float32 [64]
 *   wide:  m = x @ x, y = m * m + m                       x: float32 [256, 256]
 *
 * The wide model is the one whose kernels are big enough to split over the context's pool
 * (a sharded oneDNN matmul, a parallel elementwise loop): with MAX_C_TEST_NUM_THREADS of 2 or
 * more, its callers share the pool's workers, which ThreadSanitizer sees (our pool is built
 * with it; oneDNN runs one thread per call, so no OpenMP team hides a hand-off).
 */
#define _POSIX_C_SOURCE 200809L /* pthread barriers under strict C11 */

#include "abi_test.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

/* ---- model sizes and the weights of two versions ---------------------------------------- */

#define IN 16
#define HIDDEN 32
#define OUT 8
#define MAX_ROWS 13
#define CONV_HW 6
#define CONV_C 4
#define CONV_F 8
#define CONV_OUT (CONV_HW * CONV_HW * CONV_F)
#define POLY_N 64
#define WIDE 256
#define MAX_RESULT CONV_OUT /* the largest output 0 of any model, in floats */

typedef struct {
  float w1[IN * HIDDEN], b1[HIDDEN], w2[HIDDEN * OUT], b2[OUT];
} mlp_weights;

static mlp_weights g_set[2]; /* two versions of the mlp's weights, for reloads */
static float g_filter[3 * 3 * CONV_C * CONV_F], g_bias[CONV_F];
static max_context_t* g_context;
static max_compiled_model_t* g_mlp;

/* A deterministic pseudo-random value in [-1, 1) for (seed, i). */
static float noise(uint32_t seed, uint32_t i) {
  uint32_t h = seed * 2654435761u ^ (i + 0x9e3779b9u) * 2246822519u;
  h ^= h >> 15;
  h *= 2654435761u;
  h ^= h >> 13;
  return (float)(h & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float* v, size_t n, uint32_t seed, float scale) {
  size_t i;
  for (i = 0; i < n; ++i) v[i] = noise(seed, (uint32_t)i) * scale;
}

/* The number of threads each context's team gets: MAX_C_TEST_NUM_THREADS, else 0 (a thread
 * per core). */
static max_context_t* new_context(void) {
  max_context_options_t o;
  max_context_t* ctx = NULL;
  const char* env = getenv("MAX_C_TEST_NUM_THREADS");
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.num_threads = env ? atoi(env) : 0;
  EXPECT_OK(max_context_create(&o, &ctx));
  return ctx;
}

/* ---- failures seen by a worker thread ---------------------------------------------------- */

typedef struct {
  int failures;
  char why[512];
} verdict;

static void failed(verdict* v, const char* what, const char* detail) {
  if (v->failures++ == 0) snprintf(v->why, sizeof v->why, "%s: %s", what, detail);
}

/* Takes the status: 1 when it is success, else records it and returns 0. */
static int ok(verdict* v, max_status_t* s, const char* what) {
  char detail[400];
  if (!s) return 1;
  snprintf(detail, sizeof detail, "%s \"%s\"", max_status_code_name(max_status_code(s)), max_status_message(s));
  max_status_release(s);
  failed(v, what, detail);
  return 0;
}

/* The helpers below (graphs, tensors, models) run on worker threads too, where cmocka must
 * not be called: there MUST records into the worker's verdict (set on entry), and a failed
 * call's NULL handle makes the calls after it fail with INVALID_ARGUMENT, also recorded. */
static _Thread_local verdict* t_worker;

#define MUST(call) must((call), #call)
static void must(max_status_t* s, const char* what) {
  const char* why;
  if (t_worker) {
    ok(t_worker, s, what);
    return;
  }
  why = abi_check_status(s, MAX_STATUS_OK, NULL);
  if (why) fail_msg("%s %s", what, why);
}

/* Fails the test with the first worker's message when any worker failed. */
static void expect_no_failures(const verdict* const* verdicts, int n) {
  int i, total = 0;
  const char* first = NULL;
  for (i = 0; i < n; ++i) {
    total += verdicts[i]->failures;
    if (verdicts[i]->failures && !first) first = verdicts[i]->why;
  }
  if (total) fail_msg("%d failure(s) in the workers; the first: %s", total, first);
}

/* Starts fn(args[i]) on n threads and joins them all. */
static void run_threads(int n, void* (*fn)(void*), void* args, size_t arg_size) {
  pthread_t threads[32];
  int i;
  assert_true(n <= 32);
  for (i = 0; i < n; ++i)
    assert_int_equal(pthread_create(&threads[i], NULL, fn, (char*)args + (size_t)i * arg_size), 0);
  for (i = 0; i < n; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
}

/* ---- graphs ------------------------------------------------------------------------------ */

static max_value_t* op(max_graph_t* g, const char* name, max_value_t* a, max_value_t* b, max_value_t* c,
                       const max_attrs_t* attrs) {
  max_value_t* inputs[3] = {a, b, c};
  max_value_t* out = NULL;
  size_t n = 0;
  MUST(max_graph_add_op(g, name, 0, inputs, c ? 3 : b ? 2 : 1, attrs, &out, 1, &n));
  return out;
}

/* A float32 weight [rows, cols], or [cols] when rows is 0. */
static max_value_t* weight(max_graph_t* g, const char* name, int64_t rows, int64_t cols) {
  const max_dim_t dims[2] = {{rows, NULL}, {cols, NULL}};
  max_value_t* w = NULL;
  MUST(max_graph_add_weight(g, name, MAX_DTYPE_FLOAT32, rows ? dims : dims + 1, rows ? 2 : 1, MAX_DEVICE_REF_CPU, 0,
                            &w));
  return w;
}

static max_graph_t* mlp_graph(void) {
  max_graph_t* g = NULL;
  const max_dim_t x_dims[2] = {{0, "batch"}, {IN, NULL}};
  max_value_t *x, *h, *y;
  MUST(max_graph_create("mlp", &g));
  MUST(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));
  h = op(g, "matmul", x, weight(g, "w1", IN, HIDDEN), NULL, NULL);
  h = op(g, "relu", op(g, "add", h, weight(g, "b1", 0, HIDDEN), NULL, NULL), NULL, NULL, NULL);
  y = op(g, "add", op(g, "matmul", h, weight(g, "w2", HIDDEN, OUT), NULL, NULL), weight(g, "b2", 0, OUT), NULL, NULL);
  y = op(g, "softmax", y, NULL, NULL, NULL);
  MUST(max_graph_set_outputs(g, &y, NULL, 1));
  return g;
}

static max_graph_t* conv_graph(void) {
  max_graph_t* g = NULL;
  max_attrs_t* attrs = NULL;
  const int64_t padding[4] = {1, 1, 1, 1};
  const max_dim_t x_dims[4] = {{1, NULL}, {CONV_HW, NULL}, {CONV_HW, NULL}, {CONV_C, NULL}};
  const max_dim_t f_dims[4] = {{3, NULL}, {3, NULL}, {CONV_C, NULL}, {CONV_F, NULL}};
  max_value_t *x, *f, *y;
  MUST(max_graph_create("conv", &g));
  MUST(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, x_dims, 4, MAX_DEVICE_REF_CPU, 0, &x));
  MUST(max_graph_add_weight(g, "filter", MAX_DTYPE_FLOAT32, f_dims, 4, MAX_DEVICE_REF_CPU, 0, &f));
  MUST(max_attrs_create(&attrs));
  MUST(max_attrs_set_ints(attrs, "padding", padding, 4));
  y = op(g, "relu", op(g, "conv2d", x, f, weight(g, "bias", 0, CONV_F), attrs), NULL, NULL, NULL);
  max_attrs_release(attrs);
  MUST(max_graph_set_outputs(g, &y, NULL, 1));
  return g;
}

static max_graph_t* poly_graph(void) {
  max_graph_t* g = NULL;
  const max_dim_t x_dims[1] = {{POLY_N, NULL}};
  max_value_t *x, *outs[2];
  MUST(max_graph_create("poly", &g));
  MUST(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, x_dims, 1, MAX_DEVICE_REF_CPU, 0, &x));
  outs[0] = op(g, "add", op(g, "mul", x, x, NULL, NULL), x, NULL, NULL);
  outs[1] = op(g, "sum", x, NULL, NULL, NULL);
  MUST(max_graph_set_outputs(g, outs, NULL, 2));
  return g;
}

static max_graph_t* wide_graph(void) {
  max_graph_t* g = NULL;
  const max_dim_t x_dims[2] = {{WIDE, NULL}, {WIDE, NULL}};
  max_value_t *x, *m, *y;
  MUST(max_graph_create("wide", &g));
  MUST(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));
  m = op(g, "matmul", x, x, NULL, NULL);
  y = op(g, "add", op(g, "mul", m, m, NULL, NULL), m, NULL, NULL);
  MUST(max_graph_set_outputs(g, &y, NULL, 1));
  return g;
}

/* Compiles a graph on `ctx`, keeping `plans` plans at most. Takes the graph. */
static max_compiled_model_t* compile(max_context_t* ctx, max_graph_t* g, int64_t plans) {
  max_compile_options_t o;
  max_compiled_model_t* c = NULL;
  MUST(max_compile_options_init(&o, sizeof o));
  o.plan_cache_capacity = plans;
  MUST(max_context_compile(ctx, g, &o, &c));
  max_graph_release(g);
  return c;
}

/* ---- weights and models ------------------------------------------------------------------ */

static max_tensor_t* f32(const int64_t* dims, int32_t rank, const float* values) {
  size_t n = 1;
  int32_t i;
  max_tensor_t* t = NULL;
  for (i = 0; i < rank; ++i) n *= (size_t)dims[i];
  MUST(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, rank, values, n * sizeof(float), &t));
  return t;
}

static const char* const kMlpNames[4] = {"w1", "b1", "w2", "b2"};

static void mlp_tensors(const mlp_weights* w, max_tensor_t** out) {
  const int64_t w1[2] = {IN, HIDDEN}, b1[1] = {HIDDEN}, w2[2] = {HIDDEN, OUT}, b2[1] = {OUT};
  out[0] = f32(w1, 2, w->w1);
  out[1] = f32(b1, 1, w->b1);
  out[2] = f32(w2, 2, w->w2);
  out[3] = f32(b2, 1, w->b2);
}

static max_model_t* mlp_model(const mlp_weights* w) {
  max_tensor_t* t[4];
  max_model_t* m = NULL;
  int i;
  mlp_tensors(w, t);
  MUST(max_model_create(g_mlp, kMlpNames, t, 4, &m));
  for (i = 0; i < 4; ++i) max_tensor_release(t[i]);
  return m;
}

static max_model_t* conv_model(max_compiled_model_t* c) {
  const int64_t f_dims[4] = {3, 3, CONV_C, CONV_F}, b_dims[1] = {CONV_F};
  const char* names[2] = {"filter", "bias"};
  max_tensor_t* t[2];
  max_model_t* m = NULL;
  t[0] = f32(f_dims, 4, g_filter);
  t[1] = f32(b_dims, 1, g_bias);
  MUST(max_model_create(c, names, t, 2, &m));
  max_tensor_release(t[0]);
  max_tensor_release(t[1]);
  return m;
}

/* A registry holding one version of the mlp's weights (by reference). */
static max_weights_t* mlp_registry(const mlp_weights* w) {
  max_weights_t* r = NULL;
  max_tensor_t* t[4];
  int i;
  mlp_tensors(w, t);
  MUST(max_weights_create(&r));
  for (i = 0; i < 4; ++i) {
    MUST(max_weights_add_tensor(r, kMlpNames[i], t[i], MAX_QUANT_NONE));
    max_tensor_release(t[i]);
  }
  return r;
}

/* ---- references in plain C --------------------------------------------------------------- */

static void mlp_reference(const mlp_weights* w, const float* x, int64_t rows, float* y) {
  int64_t r;
  int i, j;
  for (r = 0; r < rows; ++r) {
    float h[HIDDEN], z[OUT], top = -INFINITY, sum = 0;
    for (j = 0; j < HIDDEN; ++j) {
      float acc = w->b1[j];
      for (i = 0; i < IN; ++i) acc += x[r * IN + i] * w->w1[i * HIDDEN + j];
      h[j] = acc > 0 ? acc : 0;
    }
    for (j = 0; j < OUT; ++j) {
      float acc = w->b2[j];
      for (i = 0; i < HIDDEN; ++i) acc += h[i] * w->w2[i * OUT + j];
      z[j] = acc;
      top = fmaxf(top, acc);
    }
    for (j = 0; j < OUT; ++j) sum += z[j] = expf(z[j] - top);
    for (j = 0; j < OUT; ++j) y[r * OUT + j] = z[j] / sum;
  }
}

static void conv_reference(const float* x, float* y) {
  int oy, ox, f, ky, kx, c;
  for (oy = 0; oy < CONV_HW; ++oy)
    for (ox = 0; ox < CONV_HW; ++ox)
      for (f = 0; f < CONV_F; ++f) {
        float acc = g_bias[f];
        for (ky = 0; ky < 3; ++ky)
          for (kx = 0; kx < 3; ++kx) {
            int iy = oy + ky - 1, ix = ox + kx - 1;
            if (iy < 0 || ix < 0 || iy >= CONV_HW || ix >= CONV_HW) continue;
            for (c = 0; c < CONV_C; ++c)
              acc += x[(iy * CONV_HW + ix) * CONV_C + c] * g_filter[((ky * 3 + kx) * CONV_C + c) * CONV_F + f];
          }
        y[(oy * CONV_HW + ox) * CONV_F + f] = acc > 0 ? acc : 0;
      }
}

static void poly_reference(const float* x, float* y) {
  int i;
  for (i = 0; i < POLY_N; ++i) y[i] = x[i] * x[i] + x[i];
}

/* ---- jobs: an input and its single-threaded results -------------------------------------- */

typedef struct {
  max_tensor_t* input; /* shared by every worker: a model only reads its inputs */
  size_t floats;       /* in output 0 */
  float want[2][MAX_RESULT]; /* output 0 under weight version 0 and 1 (mlp only) */
} job;

/* Output 0 of one execute, or 0 when it failed (recorded). */
static int execute_once(verdict* v, max_model_t* m, max_tensor_t* input, float* out, size_t floats) {
  max_tensor_list_t* outs = NULL;
  max_tensor_t* y = NULL;
  int good = ok(v, max_model_execute(m, &input, 1, &outs), "max_model_execute") &&
             ok(v, max_tensor_list_get(outs, 0, &y), "max_tensor_list_get") &&
             ok(v, max_tensor_to_host(y, out, floats * sizeof(float)), "max_tensor_to_host");
  max_tensor_release(y);
  max_tensor_list_release(outs);
  return good;
}

/* Runs `m` on the job's input on this (the main) thread and keeps the result as version
 * `version`'s, after checking it against the C reference `want`. */
static void record_reference(job* j, int version, max_model_t* m, const float* want) {
  verdict v = {0};
  size_t i;
  if (!execute_once(&v, m, j->input, j->want[version], j->floats)) fail_msg("%s", v.why);
  for (i = 0; i < j->floats; ++i)
    if (fabsf(j->want[version][i] - want[i]) > 1e-4f * (1 + fabsf(want[i])))
      fail_msg("the single-threaded reference is off: element %zu is %g, C says %g", i, j->want[version][i], want[i]);
}

/* Job k of the mlp: 1 to MAX_ROWS rows (five batch sizes in all), with its results under
 * weight version v from models[v], for each v whose model is given. */
static void mlp_job(job* j, int k, max_model_t* const models[2]) {
  static const int64_t kRows[5] = {1, 3, 5, 8, MAX_ROWS};
  float x[MAX_ROWS * IN], want[MAX_ROWS * OUT];
  const int64_t dims[2] = {kRows[k % 5], IN};
  int v;
  fill(x, (size_t)dims[0] * IN, 100 + (uint32_t)k, 1.0f);
  j->input = f32(dims, 2, x);
  j->floats = (size_t)dims[0] * OUT;
  for (v = 0; v < 2; ++v)
    if (models[v]) {
      mlp_reference(&g_set[v], x, dims[0], want);
      record_reference(j, v, models[v], want);
    }
}

static void conv_job(job* j, int k, max_model_t* m) {
  float x[CONV_HW * CONV_HW * CONV_C], want[CONV_OUT];
  const int64_t dims[4] = {1, CONV_HW, CONV_HW, CONV_C};
  fill(x, sizeof x / sizeof x[0], 200 + (uint32_t)k, 1.0f);
  j->input = f32(dims, 4, x);
  j->floats = CONV_OUT;
  conv_reference(x, want);
  record_reference(j, 0, m, want);
}

static void poly_job(job* j, int k, max_model_t* m) {
  float x[POLY_N], want[POLY_N];
  const int64_t dims[1] = {POLY_N};
  fill(x, POLY_N, 300 + (uint32_t)k, 2.0f);
  j->input = f32(dims, 1, x);
  j->floats = POLY_N;
  poly_reference(x, want);
  record_reference(j, 0, m, want);
}

static void release_jobs(job* jobs, int n) {
  int i;
  for (i = 0; i < n; ++i) max_tensor_release(jobs[i].input);
}

/* Checks `got` against version `version` of the job's results, byte for byte. */
static int matches(const job* j, int version, const float* got) {
  return memcmp(got, j->want[version], j->floats * sizeof(float)) == 0;
}

static void mismatch(verdict* v, const job* j, int version, const float* got) {
  char detail[200];
  size_t i = 0;
  while (i + 1 < j->floats && got[i] == j->want[version][i]) ++i;
  snprintf(detail, sizeof detail, "%zu floats, element %zu is %.9g, single-threaded %.9g (weights %d)", j->floats, i,
           got[i], j->want[version][i], version);
  failed(v, "a result differs from the single-threaded one", detail);
}

/* ---- callers: threads that execute one model over a set of jobs -------------------------- */

typedef struct {
  verdict v;
  max_model_t* model;
  const job* jobs;
  int num_jobs;
  int calls;
  int id;
  int version; /* of the jobs' results the model's must match */
} caller;

static void* call_model(void* arg) {
  caller* c = arg;
  float got[MAX_RESULT];
  int k;
  t_worker = &c->v;
  for (k = 0; k < c->calls; ++k) {
    const job* j = &c->jobs[(c->id * 3 + k) % c->num_jobs];
    if (!execute_once(&c->v, c->model, j->input, got, j->floats)) continue;
    if (!matches(j, c->version, got)) mismatch(&c->v, j, c->version, got);
  }
  return NULL;
}

/* ---- the wide model: inputs and results too big for a job -------------------------------- */

typedef struct {
  verdict v;
  max_model_t* model;
  max_tensor_t* const* inputs;
  const float* const* want; /* per input: the single-threaded result */
  int num_inputs;
  int calls;
  int id;
} wide_caller;

static void* call_wide(void* arg) {
  wide_caller* c = arg;
  float* got = malloc(sizeof(float) * WIDE * WIDE);
  int k;
  t_worker = &c->v;
  for (k = 0; k < c->calls; ++k) {
    const int i = (c->id + k) % c->num_inputs;
    if (!execute_once(&c->v, c->model, c->inputs[i], got, WIDE * WIDE)) continue;
    if (memcmp(got, c->want[i], sizeof(float) * WIDE * WIDE) != 0)
      failed(&c->v, "a wide result differs from the single-threaded one", "");
  }
  free(got);
  return NULL;
}

static void expect_callers_clean(const caller* callers, int n) {
  const verdict* v[32];
  int i;
  for (i = 0; i < n; ++i) v[i] = &callers[i].v;
  expect_no_failures(v, n);
}

/* ---- set-up ------------------------------------------------------------------------------ */

static int setup(void** state) {
  int s;
  (void)state;
  for (s = 0; s < 2; ++s) {
    fill(g_set[s].w1, IN * HIDDEN, 10 + 10 * s, 0.5f);
    fill(g_set[s].b1, HIDDEN, 11 + 10 * s, 0.1f);
    fill(g_set[s].w2, HIDDEN * OUT, 12 + 10 * s, 0.5f);
    fill(g_set[s].b2, OUT, 13 + 10 * s, 0.1f);
  }
  fill(g_filter, sizeof g_filter / sizeof g_filter[0], 30, 0.5f);
  fill(g_bias, CONV_F, 31, 0.1f);
  g_context = new_context();
  /* Two plans for five batch sizes: the callers evict each other's plans all the time. */
  g_mlp = compile(g_context, mlp_graph(), 2);
  return g_context && g_mlp ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  max_compiled_model_release(g_mlp);
  max_context_release(g_context);
  return 0;
}

/* ---- the tests --------------------------------------------------------------------------- */

/* 8 threads x 1000 executes of a model whose kernels split over the pool, each result byte
 * for byte the one the main thread got alone, which is checked against C. */
static void wide_model_many_callers(void** state) {
  enum { THREADS = 8, INPUTS = 3, CALLS = 1000 };
  max_compiled_model_t* c = compile(g_context, wide_graph(), 1);
  max_model_t* m = NULL;
  max_tensor_t* inputs[INPUTS];
  float* want[INPUTS];
  float* x = malloc(sizeof(float) * WIDE * WIDE);
  double* mm = malloc(sizeof(double) * WIDE * WIDE);
  const int64_t dims[2] = {WIDE, WIDE};
  wide_caller callers[THREADS];
  const verdict* v[THREADS];
  int i, r, col, p;
  (void)state;
  EXPECT_OK(max_model_create(c, NULL, NULL, 0, &m));
  for (i = 0; i < INPUTS; ++i) {
    verdict mine = {0};
    fill(x, WIDE * WIDE, 400 + (uint32_t)i, 0.25f);
    inputs[i] = f32(dims, 2, x);
    want[i] = malloc(sizeof(float) * WIDE * WIDE);
    assert_true(execute_once(&mine, m, inputs[i], want[i], WIDE * WIDE));
    for (r = 0; r < WIDE; ++r)
      for (col = 0; col < WIDE; ++col) {
        double acc = 0;
        for (p = 0; p < WIDE; ++p) acc += (double)x[r * WIDE + p] * x[p * WIDE + col];
        mm[r * WIDE + col] = acc * acc + acc;
      }
    for (r = 0; r < WIDE * WIDE; ++r)
      if (fabs(want[i][r] - mm[r]) > 1e-4 * (1 + fabs(mm[r])))
        fail_msg("the wide model is off: element %d is %g, C says %g", r, want[i][r], mm[r]);
  }
  for (i = 0; i < THREADS; ++i) {
    callers[i] = (wide_caller){.model = m, .inputs = inputs, .want = (const float* const*)want,
                               .num_inputs = INPUTS, .calls = CALLS, .id = i};
    v[i] = &callers[i].v;
  }
  run_threads(THREADS, call_wide, callers, sizeof callers[0]);
  expect_no_failures(v, THREADS);
  for (i = 0; i < INPUTS; ++i) {
    max_tensor_release(inputs[i]);
    free(want[i]);
  }
  free(x);
  free(mm);
  max_model_release(m);
  max_compiled_model_release(c);
}

/* 8 threads x 40 executes of one model, each thread cycling through inputs of five batch
 * sizes while two plans are kept: plans are built, evicted and shared under the callers. */
static void one_model_many_callers(void** state) {
  enum { THREADS = 8, JOBS = 10 };
  job jobs[JOBS];
  caller callers[THREADS];
  max_model_t* m = mlp_model(&g_set[0]);
  max_model_t* const models[2] = {m, NULL};
  int i;
  (void)state;
  for (i = 0; i < JOBS; ++i) mlp_job(&jobs[i], i, models);
  for (i = 0; i < THREADS; ++i) callers[i] = (caller){.model = m, .jobs = jobs, .num_jobs = JOBS, .calls = 40, .id = i};
  run_threads(THREADS, call_model, callers, sizeof callers[0]);
  expect_callers_clean(callers, THREADS);
  release_jobs(jobs, JOBS);
  max_model_release(m);
}

/* Four models at once, two threads each: the mlp under both weight versions (one compiled
 * model, two sets of packed weights), the conv and the poly model. */
static void several_models_at_once(void** state) {
  enum { JOBS = 4, THREADS = 8 };
  job mlp_jobs[JOBS], conv_jobs[JOBS], poly_jobs[JOBS];
  caller callers[THREADS];
  max_compiled_model_t* conv = compile(g_context, conv_graph(), 1);
  max_compiled_model_t* poly = compile(g_context, poly_graph(), 1);
  max_model_t* models[4] = {mlp_model(&g_set[0]), mlp_model(&g_set[1]), conv_model(conv), NULL};
  const job* sets[4] = {mlp_jobs, mlp_jobs, conv_jobs, poly_jobs};
  int i;
  (void)state;
  EXPECT_OK(max_model_create(poly, NULL, NULL, 0, &models[3]));
  for (i = 0; i < JOBS; ++i) {
    mlp_job(&mlp_jobs[i], i, models); /* results under both versions, from models 0 and 1 */
    conv_job(&conv_jobs[i], i, models[2]);
    poly_job(&poly_jobs[i], i, models[3]);
  }
  for (i = 0; i < THREADS; ++i)
    callers[i] = (caller){.model = models[i / 2], .jobs = sets[i / 2], .num_jobs = JOBS, .calls = 25, .id = i,
                          .version = i / 2 == 1};
  run_threads(THREADS, call_model, callers, sizeof callers[0]);
  expect_callers_clean(callers, THREADS);
  for (i = 0; i < 4; ++i) max_model_release(models[i]);
  release_jobs(mlp_jobs, JOBS);
  release_jobs(conv_jobs, JOBS);
  release_jobs(poly_jobs, JOBS);
  max_compiled_model_release(conv);
  max_compiled_model_release(poly);
}

/* ---- reloads and churn while others execute ---------------------------------------------- */

/* Reload number n (from 1) installs weight version n % 2. `started` counts reloads begun,
 * `finished` reloads returned: a call that sees finished == f before it runs and
 * started == f after it ran overlapped no reload, so it must have used version f % 2;
 * any other call must give one version's result exactly, never a mix. */
static atomic_int g_started, g_finished, g_executors_left, g_calls_done;

typedef struct {
  caller c;
  int exact_checks; /* calls that overlapped no reload */
} reload_caller;

static void* call_while_reloading(void* arg) {
  reload_caller* r = arg;
  float got[MAX_RESULT];
  int k;
  t_worker = &r->c.v;
  /* At least `calls` calls, and on until the reloader has reloaded 20 times: the calls
   * overlap reloads whatever the scheduler does. */
  for (k = 0; k < r->c.calls || atomic_load(&g_finished) < 20; ++k) {
    const job* j = &r->c.jobs[(r->c.id + k) % r->c.num_jobs];
    const int before = atomic_load(&g_finished);
    if (!execute_once(&r->c.v, r->c.model, j->input, got, j->floats)) break;
    atomic_fetch_add(&g_calls_done, 1);
    if (atomic_load(&g_started) == before) {
      ++r->exact_checks;
      if (!matches(j, before % 2, got)) mismatch(&r->c.v, j, before % 2, got);
    } else if (!matches(j, 0, got) && !matches(j, 1, got)) {
      mismatch(&r->c.v, j, 0, got);
    }
  }
  atomic_fetch_sub(&g_executors_left, 1);
  return NULL;
}

typedef struct {
  verdict v;
  max_model_t* model;
  max_weights_t* registries[2];
  int callers;
  int reloads;
} reloader;

/* Alternates the model's weights, by tensors and by registry, until the callers are done. */
static void* reload_loop(void* arg) {
  reloader* r = arg;
  max_tensor_t* t[2][4];
  int s, i;
  t_worker = &r->v;
  for (s = 0; s < 2; ++s) mlp_tensors(&g_set[s], t[s]);
  while (atomic_load(&g_executors_left) > 0) {
    const int n = atomic_fetch_add(&g_started, 1) + 1, version = n % 2;
    if (n % 3 == 0)
      ok(&r->v, max_model_reload_from_weights(r->model, r->registries[version]), "max_model_reload_from_weights");
    else
      ok(&r->v, max_model_reload(r->model, kMlpNames, t[version], 4), "max_model_reload");
    atomic_store(&g_finished, n);
    ++r->reloads;
    /* Then waits for two calls per caller to finish: at most one per caller was running
     * when the reload returned, so the others ran between two reloads (exact checks). */
    const int calls = atomic_load(&g_calls_done);
    while (atomic_load(&g_executors_left) > 0 && atomic_load(&g_calls_done) < calls + 2 * r->callers) sched_yield();
  }
  for (s = 0; s < 2; ++s)
    for (i = 0; i < 4; ++i) max_tensor_release(t[s][i]);
  return NULL;
}

typedef struct {
  verdict v;
  int rounds;
} churner;

/* Builds, compiles, binds, runs and releases conv models on the shared context while the
 * others execute: compiling and freeing under running calls. */
static void* churn_models(void* arg) {
  churner* ch = arg;
  float x[CONV_HW * CONV_HW * CONV_C], want[CONV_OUT], got[CONV_OUT];
  const int64_t dims[4] = {1, CONV_HW, CONV_HW, CONV_C};
  int round;
  size_t i;
  t_worker = &ch->v;
  fill(x, sizeof x / sizeof x[0], 400, 1.0f);
  conv_reference(x, want);
  for (round = 0; round < ch->rounds; ++round) {
    max_compiled_model_t* c = NULL;
    max_model_t* m;
    max_tensor_t* in;
    max_compile_options_t o;
    max_graph_t* g;
    if (!ok(&ch->v, max_compile_options_init(&o, sizeof o), "max_compile_options_init")) break;
    g = conv_graph();
    o.enable_fusion = round % 2; /* a different program each other round */
    if (!ok(&ch->v, max_context_compile(g_context, g, &o, &c), "max_context_compile")) {
      max_graph_release(g);
      break;
    }
    max_graph_release(g);
    m = conv_model(c);
    max_compiled_model_release(c); /* the model keeps it alive */
    in = f32(dims, 4, x);
    if (execute_once(&ch->v, m, in, got, CONV_OUT))
      for (i = 0; i < CONV_OUT; ++i)
        if (fabsf(got[i] - want[i]) > 1e-4f * (1 + fabsf(want[i]))) {
          failed(&ch->v, "a churned conv model", "differs from the C reference");
          break;
        }
    max_tensor_release(in);
    max_model_release(m);
  }
  return NULL;
}

static void reload_and_churn_during_execute(void** state) {
  enum { CALLERS = 4, JOBS = 5 };
  job jobs[JOBS];
  reload_caller callers[CALLERS];
  max_model_t* versions[2] = {mlp_model(&g_set[0]), mlp_model(&g_set[1])};
  max_model_t* m = mlp_model(&g_set[0]);
  reloader r = {.model = m, .callers = CALLERS};
  churner ch = {.rounds = 3};
  pthread_t reload_thread, churn_thread;
  const verdict* v[CALLERS + 2];
  int i, exact = 0;
  (void)state;
  for (i = 0; i < JOBS; ++i) mlp_job(&jobs[i], i, versions);
  r.registries[0] = mlp_registry(&g_set[0]);
  r.registries[1] = mlp_registry(&g_set[1]);
  atomic_store(&g_started, 0);
  atomic_store(&g_finished, 0);
  atomic_store(&g_executors_left, CALLERS);
  atomic_store(&g_calls_done, 0);
  for (i = 0; i < CALLERS; ++i)
    callers[i] = (reload_caller){.c = {.model = m, .jobs = jobs, .num_jobs = JOBS, .calls = 30, .id = i}};
  assert_int_equal(pthread_create(&reload_thread, NULL, reload_loop, &r), 0);
  assert_int_equal(pthread_create(&churn_thread, NULL, churn_models, &ch), 0);
  run_threads(CALLERS, call_while_reloading, callers, sizeof callers[0]);
  assert_int_equal(pthread_join(reload_thread, NULL), 0);
  assert_int_equal(pthread_join(churn_thread, NULL), 0);
  for (i = 0; i < CALLERS; ++i) {
    v[i] = &callers[i].c.v;
    exact += callers[i].exact_checks;
  }
  v[CALLERS] = &r.v;
  v[CALLERS + 1] = &ch.v;
  expect_no_failures(v, CALLERS + 2);
  assert_true(r.reloads >= 20);
  assert_true(exact >= r.reloads - 1); /* calls between reloads were held to their version */
  for (i = 0; i < 2; ++i) {
    max_model_release(versions[i]);
    max_weights_release(r.registries[i]);
  }
  max_model_release(m);
  release_jobs(jobs, JOBS);
}

/* Four threads each reload one weight of the same model at the same moment: every reload
 * takes effect (none is lost to another merged onto the same old weights). */
typedef struct {
  verdict v;
  max_model_t* model;
  pthread_barrier_t* start;
  int weight;
} one_weight_reloader;

static void* reload_one_weight(void* arg) {
  one_weight_reloader* r = arg;
  max_tensor_t* t[4];
  int i;
  t_worker = &r->v;
  mlp_tensors(&g_set[1], t);
  pthread_barrier_wait(r->start);
  ok(&r->v, max_model_reload(r->model, &kMlpNames[r->weight], &t[r->weight], 1), "max_model_reload");
  for (i = 0; i < 4; ++i) max_tensor_release(t[i]);
  return NULL;
}

static void concurrent_reloads_all_apply(void** state) {
  enum { ROUNDS = 100 };
  job j;
  max_model_t* versions[2] = {mlp_model(&g_set[0]), mlp_model(&g_set[1])};
  max_tensor_t* originals[4];
  pthread_barrier_t start;
  one_weight_reloader reloaders[4];
  const verdict* v[4];
  float got[MAX_RESULT];
  int round, i;
  (void)state;
  mlp_job(&j, 2, versions);
  mlp_tensors(&g_set[0], originals);
  assert_int_equal(pthread_barrier_init(&start, NULL, 4), 0);
  for (round = 0; round < ROUNDS; ++round) {
    verdict mine = {0};
    max_model_t* m = NULL;
    EXPECT_OK(max_model_create(g_mlp, kMlpNames, originals, 4, &m));
    for (i = 0; i < 4; ++i) {
      reloaders[i] = (one_weight_reloader){.model = m, .start = &start, .weight = i};
      v[i] = &reloaders[i].v;
    }
    run_threads(4, reload_one_weight, reloaders, sizeof reloaders[0]);
    expect_no_failures(v, 4);
    assert_true(execute_once(&mine, m, j.input, got, j.floats));
    if (!matches(&j, 1, got)) fail_msg("round %d: a reload was lost (the result is not the new weights')", round);
    max_model_release(m);
  }
  pthread_barrier_destroy(&start);
  for (i = 0; i < 4; ++i) max_tensor_release(originals[i]);
  for (i = 0; i < 2; ++i) max_model_release(versions[i]);
  release_jobs(&j, 1);
}

/* ---- one context, one registry, shared by threads that compile and bind ------------------ */

typedef struct {
  verdict v;
  max_weights_t* registry;
  const job* jobs;
  int id;
} binder;

/* Compiles its own mlp on the shared context (its own plans), binds it from the shared
 * registry, reads the registry and runs the jobs. */
static void* compile_and_bind(void* arg) {
  binder* b = arg;
  float got[MAX_RESULT];
  int round, k;
  t_worker = &b->v;
  for (round = 0; round < 2; ++round) {
    max_compiled_model_t* c = NULL;
    max_model_t* m = NULL;
    max_graph_t* g = mlp_graph();
    size_t count = 0, num_weights = 0;
    const char* name = NULL;
    max_tensor_t* t = NULL;
    int32_t rank = 0;
    int good = ok(&b->v, max_context_compile(g_context, g, NULL, &c), "max_context_compile");
    max_graph_release(g);
    if (!good) return NULL;
    good = ok(&b->v, max_compiled_model_num_weights(c, &num_weights), "max_compiled_model_num_weights") &&
           ok(&b->v, max_weights_count(b->registry, &count), "max_weights_count") &&
           ok(&b->v, max_weights_name(b->registry, (size_t)(b->id % 4), &name), "max_weights_name") &&
           ok(&b->v, max_weights_info(b->registry, name, NULL, &rank, NULL, NULL), "max_weights_info") &&
           ok(&b->v, max_weights_tensor(b->registry, name, &t), "max_weights_tensor") &&
           ok(&b->v, max_model_create_from_weights(c, b->registry, &m), "max_model_create_from_weights");
    if (good && (count != 4 || num_weights != 4 || rank < 1)) failed(&b->v, "the registry", "reads wrong");
    max_tensor_release(t);
    max_compiled_model_release(c);
    for (k = 0; good && k < 4; ++k) {
      const job* j = &b->jobs[(b->id + k) % 4];
      if (execute_once(&b->v, m, j->input, got, j->floats) && !matches(j, 0, got)) mismatch(&b->v, j, 0, got);
    }
    max_model_release(m);
  }
  return NULL;
}

/* The registry's bytes come from a safetensors file whose data starts 2 bytes past a 4-byte
 * boundary: every weight is a deferred copy (Storage::deferred), made by whichever thread
 * first asks for its address. */
static max_weights_t* misaligned_registry(const mlp_weights* w, char* path, size_t path_size) {
  char json[512];
  unsigned char header[8];
  size_t len, padded, i;
  FILE* f;
  max_weights_t* r = NULL;
  snprintf(json, sizeof json,
           "{\"w1\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[0,%zu]},"
           "\"b1\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]},"
           "\"w2\":{\"dtype\":\"F32\",\"shape\":[%d,%d],\"data_offsets\":[%zu,%zu]},"
           "\"b2\":{\"dtype\":\"F32\",\"shape\":[%d],\"data_offsets\":[%zu,%zu]}}",
           IN, HIDDEN, sizeof w->w1, HIDDEN, sizeof w->w1, sizeof w->w1 + sizeof w->b1, HIDDEN, OUT,
           sizeof w->w1 + sizeof w->b1, sizeof w->w1 + sizeof w->b1 + sizeof w->w2, OUT,
           sizeof w->w1 + sizeof w->b1 + sizeof w->w2, sizeof *w);
  len = strlen(json);
  padded = (len + 3) / 4 * 4 + 2; /* 8 + padded is 2 mod 4 */
  for (i = 0; i < 8; ++i) header[i] = (unsigned char)((uint64_t)padded >> (8 * i));
  snprintf(path, path_size, "/tmp/max_c_concurrency_%d.safetensors", (int)getpid());
  f = fopen(path, "wb");
  assert_non_null(f);
  fwrite(header, 1, 8, f);
  fwrite(json, 1, len, f);
  for (i = len; i < padded; ++i) fputc(' ', f);
  fwrite(w, 1, sizeof *w, f); /* w1, b1, w2, b2: no padding between float arrays */
  fclose(f);
  EXPECT_OK(max_weights_create(&r));
  EXPECT_OK(max_weights_add_file(r, path));
  return r;
}

static void shared_context_and_registry(void** state) {
  enum { THREADS = 4 };
  job jobs[4];
  binder binders[2 * THREADS];
  char path[64];
  max_model_t* m = mlp_model(&g_set[0]);
  max_model_t* const models[2] = {m, NULL};
  max_weights_t* by_reference = mlp_registry(&g_set[0]);
  max_weights_t* mapped = misaligned_registry(&g_set[0], path, sizeof path);
  const verdict* v[2 * THREADS];
  int i;
  (void)state;
  for (i = 0; i < 4; ++i) mlp_job(&jobs[i], i, models);
  for (i = 0; i < 2 * THREADS; ++i) {
    binders[i] = (binder){.registry = i % 2 ? mapped : by_reference, .jobs = jobs, .id = i};
    v[i] = &binders[i].v;
  }
  run_threads(2 * THREADS, compile_and_bind, binders, sizeof binders[0]);
  expect_no_failures(v, 2 * THREADS);
  max_weights_release(by_reference);
  max_weights_release(mapped);
  remove(path);
  release_jobs(jobs, 4);
  max_model_release(m);
}

/* ---- capture and replay under one key per thread ----------------------------------------- */

static atomic_ulong g_next_key;

static void* capture_and_replay_loop(void* arg) {
  caller* c = arg;
  const uint64_t key = (uint64_t)atomic_fetch_add(&g_next_key, 1);
  float got[MAX_RESULT];
  int k;
  t_worker = &c->v;
  for (k = 0; k < c->calls; ++k) {
    /* Jobs k and k + 5 have the same batch size: a replay runs the captured shapes. */
    const job* first = &c->jobs[(c->id + k) % 5];
    const job* again = &c->jobs[(c->id + k) % 5 + 5];
    max_tensor_list_t* outs = NULL;
    max_tensor_t* y = NULL;
    if (ok(&c->v, max_model_capture(c->model, &key, 1, &first->input, 1, &outs), "max_model_capture") &&
        ok(&c->v, max_tensor_list_get(outs, 0, &y), "max_tensor_list_get") &&
        ok(&c->v, max_tensor_to_host(y, got, first->floats * sizeof(float)), "max_tensor_to_host")) {
      if (!matches(first, 0, got)) mismatch(&c->v, first, 0, got);
      if (ok(&c->v, max_model_replay(c->model, &key, 1, &again->input, 1), "max_model_replay") &&
          ok(&c->v, max_tensor_to_host(y, got, again->floats * sizeof(float)), "max_tensor_to_host") &&
          !matches(again, 0, got))
        mismatch(&c->v, again, 0, got);
    }
    max_tensor_release(y);
    max_tensor_list_release(outs);
  }
  return NULL;
}

static void capture_and_replay_per_thread(void** state) {
  enum { THREADS = 4, JOBS = 10 };
  job jobs[JOBS];
  caller callers[THREADS];
  max_model_t* m = mlp_model(&g_set[0]);
  max_model_t* const models[2] = {m, NULL};
  int i;
  (void)state;
  for (i = 0; i < JOBS; ++i) mlp_job(&jobs[i], i, models);
  atomic_store(&g_next_key, 1);
  for (i = 0; i < THREADS; ++i) callers[i] = (caller){.model = m, .jobs = jobs, .num_jobs = JOBS, .calls = 10, .id = i};
  run_threads(THREADS, capture_and_replay_loop, callers, sizeof callers[0]);
  expect_callers_clean(callers, THREADS);
  release_jobs(jobs, JOBS);
  max_model_release(m);
}

/* ---- tensors: shared handles, views, copies, DLPack hand-offs between threads ------------- */

#define TENSOR_N 64
#define MAILBOX 64

/* Exported DLPack tensors travel between threads through a mailbox: whoever takes one
 * consumes it (imports it or calls its deleter), so deleters run on other threads than the
 * export's. */
static struct {
  pthread_mutex_t mu;
  DLManagedTensorVersioned* slots[MAILBOX];
  int count;
} g_mailbox = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

static void post(DLManagedTensorVersioned* m, verdict* v) {
  pthread_mutex_lock(&g_mailbox.mu);
  if (g_mailbox.count < MAILBOX) {
    g_mailbox.slots[g_mailbox.count++] = m;
    m = NULL;
  }
  pthread_mutex_unlock(&g_mailbox.mu);
  if (m) {
    m->deleter(m);
    failed(v, "the mailbox", "is full");
  }
}

static DLManagedTensorVersioned* take(void) {
  DLManagedTensorVersioned* m = NULL;
  pthread_mutex_lock(&g_mailbox.mu);
  if (g_mailbox.count > 0) m = g_mailbox.slots[--g_mailbox.count];
  pthread_mutex_unlock(&g_mailbox.mu);
  return m;
}

static float g_values[TENSOR_N];
static atomic_int g_borrowed_made, g_borrowed_released;

static void borrowed_released(void* user_data) {
  (void)user_data;
  atomic_fetch_add(&g_borrowed_released, 1);
}

typedef struct {
  verdict v;
  max_tensor_t* shared;
  int id;
} tensor_worker;

static int holds_values(verdict* v, const max_tensor_t* t, const char* what) {
  float got[TENSOR_N];
  if (!ok(v, max_tensor_to_host(t, got, sizeof got), what)) return 0;
  if (memcmp(got, g_values, sizeof got) != 0) {
    failed(v, what, "the elements differ");
    return 0;
  }
  return 1;
}

/* Consumes one mailed tensor: imports it and reads it (the import's release calls the
 * deleter), or calls the deleter directly. */
static void consume(verdict* v, DLManagedTensorVersioned* m, int import) {
  max_tensor_t* t = NULL;
  if (!m) return; /* the mailbox was empty */
  if (!import) {
    if (memcmp(m->dl_tensor.data, g_values, sizeof g_values) != 0) failed(v, "a mailed tensor", "has other bytes");
    m->deleter(m);
    return;
  }
  if (ok(v, max_tensor_from_dlpack(m, &t), "max_tensor_from_dlpack")) {
    holds_values(v, t, "an imported tensor");
    max_tensor_release(t);
  } else {
    m->deleter(m); /* a failed import leaves it ours */
  }
}

static void* tensor_traffic(void* arg) {
  tensor_worker* w = arg;
  const int64_t dims[1] = {TENSOR_N}, square[2] = {8, 8};
  int k;
  t_worker = &w->v;
  for (k = 0; k < 40; ++k) {
    max_tensor_t *view = NULL, *copy = NULL, *borrowed = NULL, *mine = NULL;
    DLManagedTensorVersioned* exported = NULL;
    DLManagedTensor* old = NULL;
    max_tensor_retain(w->shared);
    if (ok(&w->v, max_tensor_view(w->shared, MAX_DTYPE_FLOAT32, square, 2, &view), "max_tensor_view"))
      holds_values(&w->v, view, "a view");
    if (ok(&w->v, max_tensor_copy(w->shared, NULL, &copy), "max_tensor_copy")) holds_values(&w->v, copy, "a copy");
    if (ok(&w->v, max_tensor_to_dlpack(w->shared, &exported), "max_tensor_to_dlpack")) post(exported, &w->v);
    if (ok(&w->v, max_tensor_to_dlpack_unversioned(view, &old), "max_tensor_to_dlpack_unversioned"))
      old->deleter(old);
    /* A borrowed tensor whose only owner, after this, is a mailed DLPack export: its release
     * callback runs on whichever thread consumes the mail. */
    if (ok(&w->v,
           max_tensor_create_borrowed(MAX_DTYPE_FLOAT32, dims, 1, NULL, g_values, 1, borrowed_released, NULL, &borrowed),
           "max_tensor_create_borrowed")) {
      atomic_fetch_add(&g_borrowed_made, 1);
      if (ok(&w->v, max_tensor_to_dlpack(borrowed, &exported), "max_tensor_to_dlpack (borrowed)"))
        post(exported, &w->v);
    }
    max_tensor_release(borrowed);
    if (ok(&w->v, max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 1, g_values, sizeof g_values, &mine),
           "max_tensor_create_from_host"))
      holds_values(&w->v, mine, "a new tensor");
    max_tensor_release(mine);
    max_tensor_release(copy);
    max_tensor_release(view);
    max_tensor_release(w->shared);
    consume(&w->v, take(), (w->id + k) % 2);
    consume(&w->v, take(), (w->id + k + 1) % 2);
  }
  return NULL;
}

static void tensors_and_dlpack_across_threads(void** state) {
  enum { THREADS = 6 };
  tensor_worker workers[THREADS];
  const verdict* v[THREADS];
  const int64_t dims[1] = {TENSOR_N};
  max_tensor_t* shared;
  DLManagedTensorVersioned* left;
  int i;
  (void)state;
  fill(g_values, TENSOR_N, 500, 3.0f);
  shared = f32(dims, 1, g_values);
  atomic_store(&g_borrowed_made, 0);
  atomic_store(&g_borrowed_released, 0);
  for (i = 0; i < THREADS; ++i) {
    workers[i] = (tensor_worker){.shared = shared, .id = i};
    v[i] = &workers[i].v;
  }
  run_threads(THREADS, tensor_traffic, workers, sizeof workers[0]);
  while ((left = take()) != NULL) left->deleter(left);
  expect_no_failures(v, THREADS);
  max_tensor_release(shared);
  assert_int_equal(atomic_load(&g_borrowed_made), THREADS * 40);
  assert_int_equal(atomic_load(&g_borrowed_released), THREADS * 40);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_model_many_callers),
      cmocka_unit_test(wide_model_many_callers),
      cmocka_unit_test(several_models_at_once),
      cmocka_unit_test(reload_and_churn_during_execute),
      cmocka_unit_test(concurrent_reloads_all_apply),
      cmocka_unit_test(shared_context_and_registry),
      cmocka_unit_test(capture_and_replay_per_thread),
      cmocka_unit_test(tensors_and_dlpack_across_threads),
  };
  return cmocka_run_group_tests_name("concurrency", tests, setup, teardown);
}
