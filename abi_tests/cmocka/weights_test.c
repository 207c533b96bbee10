/* Weights through the ABI, as a C program uses them: a safetensors file written here by the
 * format's spec is mapped into a registry, listed and read without copying, a model binds
 * its declared weights from it by name and reloads from another registry, and corrupt files
 * or missing weights fail with statuses that name them. The model:
 *
 *   y = x @ w + b        x: float32 [batch, 2], w: weight [2, 3], b: weight [3]
 */
#define _POSIX_C_SOURCE 200809L /* truncate */

#include "abi_test.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const float kW[6] = {1, 2, 3, 4, 5, 6};
static const float kB[3] = {0.5f, -1, 2};
static char g_path[64], g_bad_path[64];

/* u64 header length, the JSON header padded with spaces to 8 bytes, then w's and b's bytes,
 * plus a tensor the graph does not declare. */
static size_t safetensors_image(unsigned char* out) {
  const char* json =
      "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[24,36]},"
      "\"extra\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[40,48]}}";
  size_t len = strlen(json), padded = (len + 7) / 8 * 8, i;
  const int64_t extra = 42;
  for (i = 0; i < 8; ++i) out[i] = (unsigned char)((uint64_t)padded >> (8 * i));
  memcpy(out + 8, json, len);
  memset(out + 8 + len, ' ', padded - len);
  memcpy(out + 8 + padded, kW, sizeof kW);
  memcpy(out + 8 + padded + 24, kB, sizeof kB);
  memset(out + 8 + padded + 36, 0, 4);
  memcpy(out + 8 + padded + 40, &extra, sizeof extra);
  return 8 + padded + 48;
}

static void write_file(const char* path, const unsigned char* data, size_t n) {
  FILE* f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, n, f), n);
  fclose(f);
}

static max_compiled_model_t* compile_linear(void) {
  max_context_t* ctx = NULL;
  max_graph_t* g = NULL;
  max_compiled_model_t* compiled = NULL;
  const max_dim_t x_dims[2] = {{0, "batch"}, {2, NULL}};
  const max_dim_t w_dims[2] = {{2, NULL}, {3, NULL}};
  const max_dim_t b_dims[1] = {{3, NULL}};
  max_value_t *x, *w, *b, *xw, *y;
  max_value_t* ins[2];
  const char* name = "y";
  size_t n = 0;
  EXPECT_OK(max_context_create(NULL, &ctx));
  EXPECT_OK(max_graph_create("linear", &g));
  EXPECT_OK(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));
  EXPECT_OK(max_graph_add_weight(g, "w", MAX_DTYPE_FLOAT32, w_dims, 2, MAX_DEVICE_REF_CPU, 0, &w));
  EXPECT_OK(max_graph_add_weight(g, "b", MAX_DTYPE_FLOAT32, b_dims, 1, MAX_DEVICE_REF_CPU, 0, &b));
  ins[0] = x;
  ins[1] = w;
  EXPECT_OK(max_graph_add_op(g, "matmul", 0, ins, 2, NULL, &xw, 1, &n));
  ins[0] = xw;
  ins[1] = b;
  EXPECT_OK(max_graph_add_op(g, "add", 0, ins, 2, NULL, &y, 1, &n));
  EXPECT_OK(max_graph_set_outputs(g, &y, &name, 1));
  EXPECT_OK(max_context_compile(ctx, g, NULL, &compiled));
  max_graph_release(g);
  max_context_release(ctx);
  return compiled;
}

/* y for x = [[1, 1]] with weights w (row-major [2, 3]) and b. */
static void check_output(max_model_t* model, const float* w, const float* b) {
  const float x[2] = {1, 1};
  const int64_t dims[2] = {1, 2};
  max_tensor_t* in = NULL;
  max_tensor_list_t* out = NULL;
  max_tensor_t* y = NULL;
  const void* data = NULL;
  int j;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, x, sizeof x, &in));
  EXPECT_OK(max_model_execute(model, &in, 1, &out));
  EXPECT_OK(max_tensor_list_get(out, 0, &y));
  EXPECT_OK(max_tensor_data(y, &data));
  for (j = 0; j < 3; ++j) assert_float_equal(((const float*)data)[j], w[j] + w[3 + j] + b[j], 1e-6);
  max_tensor_release(y);
  max_tensor_list_release(out);
  max_tensor_release(in);
}

static int setup(void** state) {
  unsigned char image[512];
  size_t n = safetensors_image(image);
  (void)state;
  snprintf(g_path, sizeof g_path, "/tmp/max_c_weights_test_%d.safetensors", (int)getpid());
  snprintf(g_bad_path, sizeof g_bad_path, "/tmp/max_c_weights_bad_%d.safetensors", (int)getpid());
  write_file(g_path, image, n);
  write_file(g_bad_path, image, n - 5); /* the last tensor runs past the end */
  return 0;
}

static int teardown(void** state) {
  (void)state;
  remove(g_path);
  remove(g_bad_path);
  return 0;
}

static void lists_and_reads_a_file(void** state) {
  max_weights_t* w = NULL;
  size_t count = 0;
  const char* name = NULL;
  max_dtype_t dtype = 0;
  int32_t rank = 0, read_only = 0;
  const int64_t* dims = NULL;
  max_quant_encoding_t encoding = -1;
  max_tensor_t* t = NULL;
  const void* data = NULL;
  (void)state;
  EXPECT_OK(max_weights_create(&w));
  EXPECT_OK(max_weights_add_file(w, g_path));
  EXPECT_OK(max_weights_count(w, &count));
  assert_int_equal(count, 3);
  EXPECT_OK(max_weights_name(w, 0, &name));
  assert_string_equal(name, "w");
  EXPECT_OK(max_weights_info(w, "w", &dtype, &rank, &dims, &encoding));
  assert_int_equal(dtype, MAX_DTYPE_FLOAT32);
  assert_int_equal(rank, 2);
  assert_int_equal(dims[0], 2);
  assert_int_equal(dims[1], 3);
  assert_int_equal(encoding, MAX_QUANT_NONE);
  EXPECT_OK(max_weights_tensor(w, "b", &t));
  max_weights_release(w); /* the tensor keeps the file mapped */
  EXPECT_OK(max_tensor_is_read_only(t, &read_only));
  assert_true(read_only);
  EXPECT_OK(max_tensor_data(t, &data));
  assert_memory_equal(data, kB, sizeof kB);
  max_tensor_release(t);
}

static void a_model_binds_and_reloads_by_name(void** state) {
  const float w2[6] = {0, 0, 0, 1, 1, 1};
  const int64_t w_dims[2] = {2, 3};
  max_compiled_model_t* compiled = compile_linear();
  max_weights_t *file = NULL, *update = NULL;
  max_model_t* model = NULL;
  max_tensor_t* t = NULL;
  (void)state;
  EXPECT_OK(max_weights_create(&file));
  EXPECT_OK(max_weights_add_file(file, g_path));
  EXPECT_OK(max_model_create_from_weights(compiled, file, &model));
  check_output(model, kW, kB);

  EXPECT_OK(max_weights_create(&update));
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, w_dims, 2, w2, sizeof w2, &t));
  EXPECT_OK(max_weights_add_tensor(update, "w", t, MAX_QUANT_NONE));
  max_tensor_release(t);
  EXPECT_OK(max_model_reload_from_weights(model, update));
  check_output(model, w2, kB);
  max_model_release(model);

  /* A registry without b: NOT_FOUND naming it, and no model. */
  model = SENTINEL_PTR;
  EXPECT_STATUS(max_model_create_from_weights(compiled, update, &model), MAX_STATUS_NOT_FOUND, "'b'");
  assert_null(model);
  max_weights_release(update);
  max_weights_release(file);
  max_compiled_model_release(compiled);
}

static void corrupt_files_name_the_file_and_add_nothing(void** state) {
  max_weights_t* w = NULL;
  size_t count = 7;
  (void)state;
  EXPECT_OK(max_weights_create(&w));
  EXPECT_STATUS(max_weights_add_file(w, g_bad_path), MAX_STATUS_DATA_LOSS, g_bad_path, "extra");
  EXPECT_OK(max_weights_count(w, &count));
  assert_int_equal(count, 0);
  EXPECT_OK(max_weights_add_file(w, g_path));
  EXPECT_STATUS(max_weights_add_file(w, g_path), MAX_STATUS_ALREADY_EXISTS, "'w'");
  EXPECT_OK(max_weights_count(w, &count));
  assert_int_equal(count, 3);
  max_weights_release(w);
}

/* A weights file truncated while a model reads it in place: the read would be SIGBUS, which
 * ends the process; instead the execute fails with DATA_LOSS naming the file, and the model
 * runs again once its weights are reloaded. y = x + v, v: float32 [4096] (16 KiB, 4 pages). */
#define BIG 4096
static void a_file_truncated_under_a_model_is_data_loss_not_a_crash(void** state) {
  static unsigned char image[8 + 64 + BIG * 4];
  static float x[BIG], v[BIG];
  const char* json = "{\"v\":{\"dtype\":\"F32\",\"shape\":[4096],\"data_offsets\":[0,16384]}}";
  const size_t len = strlen(json), padded = (len + 7) / 8 * 8;
  const int64_t dims[1] = {BIG};
  const max_dim_t vdims[1] = {{BIG, NULL}};
  char path[96];
  max_context_t* ctx = NULL;
  max_graph_t* g = NULL;
  max_value_t *ins[2], *y = NULL;
  max_compiled_model_t* compiled = NULL;
  max_weights_t *file = NULL, *fresh = NULL;
  max_model_t* model = NULL;
  max_tensor_t *in = NULL, *t = NULL;
  max_tensor_list_t* out = SENTINEL_PTR;
  size_t i, n = 0;
  (void)state;
  for (i = 0; i < BIG; ++i) v[i] = (float)i;
  for (i = 0; i < 8; ++i) image[i] = (unsigned char)((uint64_t)padded >> (8 * i));
  memcpy(image + 8, json, len);
  memset(image + 8 + len, ' ', padded - len);
  memcpy(image + 8 + padded, v, sizeof v);
  snprintf(path, sizeof path, "/tmp/max_c_weights_shrinks_%d.safetensors", (int)getpid());
  write_file(path, image, 8 + padded + sizeof v);

  EXPECT_OK(max_context_create(NULL, &ctx));
  EXPECT_OK(max_graph_create("add_v", &g));
  EXPECT_OK(max_graph_add_input(g, "x", MAX_DTYPE_FLOAT32, vdims, 1, MAX_DEVICE_REF_CPU, 0, &ins[0]));
  EXPECT_OK(max_graph_add_weight(g, "v", MAX_DTYPE_FLOAT32, vdims, 1, MAX_DEVICE_REF_CPU, 0, &ins[1]));
  EXPECT_OK(max_graph_add_op(g, "add", 0, ins, 2, NULL, &y, 1, &n));
  EXPECT_OK(max_graph_set_outputs(g, &y, NULL, 1));
  EXPECT_OK(max_context_compile(ctx, g, NULL, &compiled));
  EXPECT_OK(max_weights_create(&file));
  EXPECT_OK(max_weights_add_file(file, path));
  EXPECT_OK(max_model_create_from_weights(compiled, file, &model));
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 1, x, sizeof x, &in));
  EXPECT_OK(max_model_execute(model, &in, 1, &out));
  max_tensor_list_release(out);

  assert_int_equal(truncate(path, 0), 0);
  out = SENTINEL_PTR;
  EXPECT_STATUS(max_model_execute(model, &in, 1, &out), MAX_STATUS_DATA_LOSS, "weight 'v'", path,
                "shorter than when it was mapped");
  assert_null(out);
  /* Reads past the end stay answered (zeros), and stay reported. */
  EXPECT_STATUS(max_model_execute(model, &in, 1, &out), MAX_STATUS_DATA_LOSS, path);

  /* Reloaded from memory, the model runs again. */
  EXPECT_OK(max_weights_create(&fresh));
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 1, v, sizeof v, &t));
  EXPECT_OK(max_weights_add_tensor(fresh, "v", t, MAX_QUANT_NONE));
  EXPECT_OK(max_model_reload_from_weights(model, fresh));
  EXPECT_OK(max_model_execute(model, &in, 1, &out));
  {
    max_tensor_t* r = NULL;
    const void* data = NULL;
    EXPECT_OK(max_tensor_list_get(out, 0, &r));
    EXPECT_OK(max_tensor_data(r, &data));
    assert_float_equal(((const float*)data)[BIG - 1], (float)(BIG - 1), 0);
    max_tensor_release(r);
  }
  max_tensor_list_release(out);
  max_tensor_release(t);
  max_tensor_release(in);
  max_model_release(model);
  max_weights_release(fresh);
  max_weights_release(file);
  max_compiled_model_release(compiled);
  max_graph_release(g);
  max_context_release(ctx);
  remove(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lists_and_reads_a_file),
      cmocka_unit_test(a_model_binds_and_reloads_by_name),
      cmocka_unit_test(corrupt_files_name_the_file_and_add_nothing),
      cmocka_unit_test(a_file_truncated_under_a_model_is_data_loss_not_a_crash),
  };
  return cmocka_run_group_tests_name("weights", tests, setup, teardown);
}
