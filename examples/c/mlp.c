/*
 * mlp.c -- the MLP every language's example builds (C, Python, Rust, Go, Java), so that
 * scripts/test.sh can check they all print the same numbers:
 *
 *   logits = relu(x @ w1 + b1) @ w2        x: float32 [batch, 4] -> logits: float32 [batch, 3]
 *
 * Every tensor is pattern(shape, scale): element i is ((i * 7) % 11 - 5) * scale, with scales
 * w1 0.1, b1 0.01, w2 0.05 and x 0.5. For batches 1, 7 and 64 it prints
 *
 *   batch %2d: first row %.6f %.6f %.6f
 *
 * and checks the whole result against a plain C loop.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "example_check.h"
#include "max_c.h"

enum { IN = 4, HIDDEN = 16, OUT = 3 };

static float* pattern(size_t n, float scale) {
  float* data = malloc(n * sizeof *data);
  EXPECT(data != NULL, "memory for a pattern");
  for (size_t i = 0; i < n; ++i) data[i] = (float)((long)(i * 7 % 11) - 5) * scale;
  return data;
}

static max_tensor_t* tensor(const float* data, int64_t rows, int64_t cols) {
  const int64_t dims[2] = {rows, cols};
  const int32_t rank = rows < 0 ? 1 : 2;
  const int64_t* shape = rows < 0 ? &dims[1] : dims;
  const size_t n = (size_t)(rows < 0 ? cols : rows * cols);
  max_tensor_t* t = NULL;
  CHECK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, shape, rank, data, n * sizeof(float), &t));
  return t;
}

static max_value_t* op(max_graph_t* graph, const char* name, max_value_t* a, max_value_t* b) {
  max_value_t* inputs[2] = {a, b};
  max_value_t* out = NULL;
  size_t count = 0;
  CHECK(max_graph_add_op(graph, name, 0, inputs, b ? 2 : 1, NULL, &out, 1, &count));
  return out;
}

static max_value_t* weight(max_graph_t* graph, const char* name, int64_t rows, int64_t cols) {
  const max_dim_t dims[2] = {{rows, NULL}, {cols, NULL}};
  max_value_t* w = NULL;
  if (rows < 0) {
    CHECK(max_graph_add_weight(graph, name, MAX_DTYPE_FLOAT32, &dims[1], 1, MAX_DEVICE_REF_CPU, 0, &w));
  } else {
    CHECK(max_graph_add_weight(graph, name, MAX_DTYPE_FLOAT32, dims, 2, MAX_DEVICE_REF_CPU, 0, &w));
  }
  return w;
}

static max_graph_t* build_mlp(void) {
  max_graph_t* graph = NULL;
  CHECK(max_graph_create("mlp", &graph));
  const max_dim_t x_dims[2] = {{0, "batch"}, {IN, NULL}};
  max_value_t* x = NULL;
  CHECK(max_graph_add_input(graph, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));
  max_value_t* hidden = op(graph, "relu",
                           op(graph, "add", op(graph, "matmul", x, weight(graph, "w1", IN, HIDDEN)),
                              weight(graph, "b1", -1, HIDDEN)),
                           NULL);
  max_value_t* logits = op(graph, "matmul", hidden, weight(graph, "w2", HIDDEN, OUT));
  const char* names[1] = {"logits"};
  CHECK(max_graph_set_outputs(graph, &logits, names, 1));
  return graph;
}

/* The largest difference between `got` and the MLP computed by plain loops. */
static double max_error(const float* x, int64_t batch, const float* w1, const float* b1, const float* w2,
                        const float* got) {
  double worst = 0;
  for (int64_t r = 0; r < batch; ++r) {
    float h[HIDDEN];
    for (int j = 0; j < HIDDEN; ++j) {
      float s = b1[j];
      for (int p = 0; p < IN; ++p) s += x[r * IN + p] * w1[p * HIDDEN + j];
      h[j] = s > 0 ? s : 0;
    }
    for (int j = 0; j < OUT; ++j) {
      float s = 0;
      for (int p = 0; p < HIDDEN; ++p) s += h[p] * w2[p * OUT + j];
      worst = fmax(worst, fabs((double)s - got[r * OUT + j]));
    }
  }
  return worst;
}

static void run_batch(max_model_t* model, int64_t batch, const float* w1, const float* b1, const float* w2) {
  float* x = pattern((size_t)batch * IN, 0.5f);
  max_tensor_t* input = tensor(x, batch, IN);
  max_tensor_list_t* outputs = NULL;
  CHECK(max_model_execute(model, &input, 1, &outputs));
  max_tensor_t* logits = NULL;
  CHECK(max_tensor_list_get(outputs, 0, &logits));
  const void* data = NULL;
  CHECK(max_tensor_data(logits, &data));
  const float* y = data;
  printf("batch %2lld: first row %.6f %.6f %.6f\n", (long long)batch, y[0], y[1], y[2]);
  EXPECT(max_error(x, batch, w1, b1, w2, y) < 1e-5, "the result to match the plain C loops");
  max_tensor_release(logits);
  max_tensor_list_release(outputs);
  max_tensor_release(input);
  free(x);
}

int main(void) {
  CHECK(max_check_abi(MAX_ABI_VERSION));
  max_graph_t* graph = build_mlp();
  max_context_t* context = NULL;
  CHECK(max_context_create(NULL, &context));
  max_compiled_model_t* compiled = NULL;
  CHECK(max_context_compile(context, graph, NULL, &compiled));

  float *w1 = pattern(IN * HIDDEN, 0.1f), *b1 = pattern(HIDDEN, 0.01f), *w2 = pattern(HIDDEN * OUT, 0.05f);
  max_tensor_t* weights[3] = {tensor(w1, IN, HIDDEN), tensor(b1, -1, HIDDEN), tensor(w2, HIDDEN, OUT)};
  const char* names[3] = {"w1", "b1", "w2"};
  max_model_t* model = NULL;
  CHECK(max_model_create(compiled, names, weights, 3, &model));
  for (int i = 0; i < 3; ++i) max_tensor_release(weights[i]);

  const int64_t batches[3] = {1, 7, 64};
  for (int i = 0; i < 3; ++i) run_batch(model, batches[i], w1, b1, w2);
  printf("mlp: OK\n");

  max_model_release(model);
  max_compiled_model_release(compiled);
  max_context_release(context);
  max_graph_release(graph);
  free(w1);
  free(b1);
  free(w2);
  return 0;
}
