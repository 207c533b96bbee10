/* Run options (ABI 1.8) through the header only: a deadline and a cancellation flag stop a
 * while_loop whose trip count is, for all practical purposes, endless (the hang of an ONNX
 * Loop with M = 2^52), with DEADLINE_EXCEEDED / CANCELLED naming the loop, and the model runs
 * normally afterwards. The model:
 *
 *   i = 0; while (i < limit) i = i + 1; return i        limit: int64 scalar input
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep */

#include "abi_test.h"

#include <pthread.h>
#include <time.h>

static max_model_t* g_model;

/* A loop graph's inputs (i, limit), both int64 scalars. */
static void loop_inputs(max_graph_t* g, max_value_t** v) {
  EXPECT_OK(max_graph_add_input(g, "i", MAX_DTYPE_INT64, NULL, 0, MAX_DEVICE_REF_CPU, 0, &v[0]));
  EXPECT_OK(max_graph_add_input(g, "limit", MAX_DTYPE_INT64, NULL, 0, MAX_DEVICE_REF_CPU, 0, &v[1]));
}

static max_value_t* i64_constant(max_graph_t* g, int64_t x) {
  max_tensor_t* t = NULL;
  max_value_t* c = NULL;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_INT64, NULL, 0, &x, sizeof x, &t));
  EXPECT_OK(max_graph_add_constant(g, t, &c));
  max_tensor_release(t);
  return c;
}

static max_graph_t* predicate_graph(void) {
  max_graph_t* g = NULL;
  max_value_t *v[2], *go = NULL;
  size_t n = 0;
  EXPECT_OK(max_graph_create("predicate", &g));
  loop_inputs(g, v);
  EXPECT_OK(max_graph_add_op(g, "less", 0, v, 2, NULL, &go, 1, &n));
  EXPECT_OK(max_graph_set_outputs(g, &go, NULL, 1));
  return g;
}

static max_graph_t* body_graph(void) {
  max_graph_t* g = NULL;
  max_value_t *v[2], *ins[2], *out[2];
  size_t n = 0;
  EXPECT_OK(max_graph_create("body", &g));
  loop_inputs(g, v);
  ins[0] = v[0];
  ins[1] = i64_constant(g, 1);
  EXPECT_OK(max_graph_add_op(g, "add", 0, ins, 2, NULL, &out[0], 1, &n));
  out[1] = v[1];
  EXPECT_OK(max_graph_set_outputs(g, out, NULL, 2));
  return g;
}

static max_model_t* counting_loop(void) {
  max_context_t* ctx = NULL;
  max_graph_t *g = NULL, *pred = predicate_graph(), *body = body_graph();
  max_attrs_t* attrs = NULL;
  max_compiled_model_t* compiled = NULL;
  max_model_t* model = NULL;
  max_value_t *ins[2], *outs[2];
  int64_t pred_index = -1, body_index = -1;
  const char* name = "i";
  size_t n = 0;
  EXPECT_OK(max_context_create(NULL, &ctx));
  EXPECT_OK(max_graph_create("count", &g));
  EXPECT_OK(max_graph_add_input(g, "limit", MAX_DTYPE_INT64, NULL, 0, MAX_DEVICE_REF_CPU, 0, &ins[1]));
  ins[0] = i64_constant(g, 0);
  EXPECT_OK(max_graph_add_subgraph(g, pred, &pred_index));
  EXPECT_OK(max_graph_add_subgraph(g, body, &body_index));
  EXPECT_OK(max_attrs_create(&attrs));
  EXPECT_OK(max_attrs_set_graph(attrs, "predicate", pred_index));
  EXPECT_OK(max_attrs_set_graph(attrs, "body", body_index));
  EXPECT_OK(max_graph_add_op(g, "while_loop", 0, ins, 2, attrs, outs, 2, &n));
  EXPECT_OK(max_graph_set_outputs(g, outs, &name, 1));
  EXPECT_OK(max_context_compile(ctx, g, NULL, &compiled));
  EXPECT_OK(max_model_create(compiled, NULL, NULL, 0, &model));
  max_compiled_model_release(compiled);
  max_attrs_release(attrs);
  max_graph_release(body);
  max_graph_release(pred);
  max_graph_release(g);
  max_context_release(ctx);
  return model;
}

static max_tensor_t* scalar(int64_t x) {
  max_tensor_t* t = NULL;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_INT64, NULL, 0, &x, sizeof x, &t));
  return t;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The model counts to `limit` under `options` and gives `want`. */
static void expect_count(const max_run_options_t* options, int64_t limit, int64_t want) {
  max_tensor_t* in = scalar(limit);
  max_tensor_list_t* outs = NULL;
  max_tensor_t* y = NULL;
  const void* data = NULL;
  EXPECT_OK(max_model_execute_with_options(g_model, &in, 1, options, &outs));
  EXPECT_OK(max_tensor_list_get(outs, 0, &y));
  EXPECT_OK(max_tensor_data(y, &data));
  assert_int_equal(*(const int64_t*)data, want);
  max_tensor_release(y);
  max_tensor_list_release(outs);
  max_tensor_release(in);
}

static void init_gives_no_limits(void** state) {
  max_run_options_t o;
  (void)state;
  memset(&o, 0xab, sizeof o);
  EXPECT_OK(max_run_options_init(&o, sizeof o));
  assert_int_equal(o.struct_size, sizeof o);
  assert_int_equal(o.timeout_us, 0);
  assert_null(o.cancel_flag);
  expect_count(&o, 1000, 1000);
  expect_count(NULL, 7, 7);
}

/* 2^52 iterations (the trip count of the fuzzed ONNX Loop) would take years. */
static void a_deadline_stops_an_endless_loop(void** state) {
  max_run_options_t o;
  max_tensor_t* in = scalar(INT64_C(1) << 52);
  max_tensor_list_t* outs = SENTINEL_PTR;
  double t0, elapsed;
  (void)state;
  EXPECT_OK(max_run_options_init(&o, sizeof o));
  o.timeout_us = 50000;
  t0 = now_s();
  EXPECT_STATUS(max_model_execute_with_options(g_model, &in, 1, &o, &outs), MAX_STATUS_DEADLINE_EXCEEDED,
                "op 'while_loop' (iteration ", "deadline", "50000 us");
  elapsed = now_s() - t0;
  assert_null(outs);
  assert_true(elapsed >= 0.05);
  assert_true(elapsed < 5.0); /* within a step of the deadline, with a shared machine's slack */
  max_tensor_release(in);
  expect_count(&o, 10, 10); /* the model is usable, under the same options */
}

static void* cancel_later(void* flag) {
  struct timespec ts = {0, 50 * 1000 * 1000};
  nanosleep(&ts, NULL);
  __atomic_store_n((int32_t*)flag, 1, __ATOMIC_RELAXED);
  return NULL;
}

static void a_flag_set_from_another_thread_cancels(void** state) {
  int32_t flag = 0;
  max_run_options_t o;
  max_tensor_t* in = scalar(INT64_C(1) << 52);
  max_tensor_list_t* outs = SENTINEL_PTR;
  pthread_t canceller;
  (void)state;
  EXPECT_OK(max_run_options_init(&o, sizeof o));
  o.cancel_flag = &flag;
  assert_int_equal(pthread_create(&canceller, NULL, cancel_later, &flag), 0);
  EXPECT_STATUS(max_model_execute_with_options(g_model, &in, 1, &o, &outs), MAX_STATUS_CANCELLED,
                "op 'while_loop' (iteration ", "cancel");
  assert_int_equal(pthread_join(canceller, NULL), 0);
  assert_null(outs);
  /* A set flag refuses the next call before its first step; cleared, the model runs. */
  EXPECT_STATUS(max_model_execute_with_options(g_model, &in, 1, &o, &outs), MAX_STATUS_CANCELLED, "cancel");
  flag = 0;
  expect_count(&o, 3, 3);
  max_tensor_release(in);
}

static void bad_options_are_refused(void** state) {
  max_run_options_t o;
  max_tensor_t* in = scalar(1);
  max_tensor_list_t* outs = SENTINEL_PTR;
  (void)state;
  EXPECT_OK(max_run_options_init(&o, sizeof o));
  o.timeout_us = -1;
  EXPECT_INVALID(max_model_execute_with_options(g_model, &in, 1, &o, &outs), "options->timeout_us is -1");
  assert_null(outs);
  o.timeout_us = 0;
  o.struct_size = 1;
  EXPECT_INVALID(max_model_execute_with_options(g_model, &in, 1, &o, &outs), "struct_size");
  /* An older program's struct, without the flag: defaults fill the tail. */
  o.struct_size = offsetof(max_run_options_t, cancel_flag);
  o.cancel_flag = (const int32_t*)SENTINEL_PTR; /* past struct_size: never read */
  expect_count(&o, 2, 2);
  max_tensor_release(in);
}

static int setup(void** state) {
  (void)state;
  g_model = counting_loop();
  return g_model ? 0 : -1;
}

static int teardown(void** state) {
  (void)state;
  max_model_release(g_model);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_gives_no_limits),
      cmocka_unit_test(a_deadline_stops_an_endless_loop),
      cmocka_unit_test(a_flag_set_from_another_thread_cancels),
      cmocka_unit_test(bad_options_are_refused),
  };
  return cmocka_run_group_tests_name("run options", tests, setup, teardown);
}
