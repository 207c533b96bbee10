/*
 * mlp_graph.c -- builds a two-layer MLP with a symbolic batch through the graph ABI, prints
 * it, writes it to a MAXG file, loads it back and checks the copy is the same graph.
 *
 *   y = relu(x @ w1 + b1) @ w2        x: float32 [batch, 8]
 *
 * w1 and b1 are external weights (bound by name when a model is initialized); w2 is a
 * constant stored in the graph. Usage: mlp_graph [path.maxg] (default: a temp file).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "example_check.h"
#include "max_c.h"

/* One op with a single output. */
static max_value_t* op1(max_graph_t* graph, const char* name, max_value_t* a, max_value_t* b) {
  max_value_t* inputs[2] = {a, b};
  max_value_t* out = NULL;
  size_t count = 0;
  CHECK(max_graph_add_op(graph, name, 0, inputs, b ? 2 : 1, NULL, &out, 1, &count));
  return out;
}

static void print_value(const char* label, const max_value_t* value) {
  const char* text = NULL;
  CHECK(max_value_type_string(value, &text));
  printf("  %-8s %s\n", label, text);
}

static max_graph_t* build_mlp(void) {
  max_graph_t* graph = NULL;
  CHECK(max_graph_create("mlp", &graph));

  const max_dim_t x_dims[2] = {{0, "batch"}, {8, NULL}};
  max_value_t* x = NULL;
  CHECK(max_graph_add_input(graph, "x", MAX_DTYPE_FLOAT32, x_dims, 2, MAX_DEVICE_REF_CPU, 0, &x));

  const max_dim_t w1_dims[2] = {{8, NULL}, {16, NULL}};
  const max_dim_t b1_dims[1] = {{16, NULL}};
  max_value_t *w1 = NULL, *b1 = NULL;
  CHECK(max_graph_add_weight(graph, "w1", MAX_DTYPE_FLOAT32, w1_dims, 2, MAX_DEVICE_REF_CPU, 0, &w1));
  CHECK(max_graph_add_weight(graph, "b1", MAX_DTYPE_FLOAT32, b1_dims, 1, MAX_DEVICE_REF_CPU, 0, &b1));

  /* w2 is small and fixed: a constant made from a host tensor. */
  float w2_data[16 * 4];
  for (int i = 0; i < 16 * 4; ++i) w2_data[i] = (float)(i % 5) * 0.25f - 0.5f;
  const int64_t w2_shape[2] = {16, 4};
  max_tensor_t* w2_tensor = NULL;
  CHECK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, w2_shape, 2, w2_data, sizeof w2_data,
                                    &w2_tensor));
  max_value_t* w2 = NULL;
  CHECK(max_graph_add_constant(graph, w2_tensor, &w2));
  max_tensor_release(w2_tensor); /* the graph keeps its own copy */

  max_value_t* hidden = op1(graph, "relu", op1(graph, "add", op1(graph, "matmul", x, w1), b1), NULL);
  max_value_t* y = op1(graph, "matmul", hidden, w2);
  const char* names[1] = {"y"};
  CHECK(max_graph_set_outputs(graph, &y, names, 1));

  print_value("x", x);
  print_value("hidden", hidden);
  print_value("y", y);
  int64_t size = 0;
  const char* expr = NULL;
  CHECK(max_value_dim(y, 0, &size, &expr));
  EXPECT(size == -1 && strcmp(expr, "batch") == 0, "y's first dim to be the symbol batch");
  return graph;
}

/* A bad call fails with a message and leaves the graph as it was. */
static void show_error(max_graph_t* graph) {
  max_value_t* x = NULL;
  CHECK(max_graph_input(graph, 0, &x, NULL));
  size_t before = 0, after = 0, count = 0;
  CHECK(max_graph_num_ops(graph, &before));
  max_value_t* inputs[2] = {x, x};
  max_value_t* out = NULL;
  max_status_t* status = max_graph_add_op(graph, "matmul", 0, inputs, 2, NULL, &out, 1, &count);
  EXPECT(max_status_code(status) == MAX_STATUS_INVALID_ARGUMENT, "x @ x to be refused");
  printf("  x @ x -> %s: %s\n", max_status_code_name(max_status_code(status)),
         max_status_message(status));
  max_status_release(status);
  CHECK(max_graph_num_ops(graph, &after));
  EXPECT(before == after, "the failed op to leave the graph unchanged");
}

static char* graph_text(const max_graph_t* graph, max_buffer_t** keep) {
  const void* data = NULL;
  CHECK(max_graph_to_text(graph, keep));
  CHECK(max_buffer_data(*keep, &data));
  return (char*)data;
}

int main(int argc, char** argv) {
  CHECK(max_check_abi(MAX_ABI_VERSION));
  char path[256];
  if (argc > 1) {
    snprintf(path, sizeof path, "%s", argv[1]);
  } else {
    snprintf(path, sizeof path, "/tmp/max_c_mlp_%ld.maxg", (long)getpid());
  }

  printf("building the graph\n");
  max_graph_t* graph = build_mlp();
  show_error(graph);

  max_buffer_t* text = NULL;
  const char* printed = graph_text(graph, &text);
  printf("\n%s\n", printed);

  CHECK(max_graph_save(graph, path));
  max_graph_t* loaded = NULL;
  CHECK(max_graph_load(path, &loaded));
  max_buffer_t* loaded_text = NULL;
  EXPECT(strcmp(graph_text(loaded, &loaded_text), printed) == 0,
         "the loaded graph to print like the saved one");
  printf("saved to %s and loaded back: identical\n", path);

  max_buffer_release(text);
  max_buffer_release(loaded_text);
  max_graph_release(loaded);
  max_graph_release(graph);
  if (argc <= 1) unlink(path);
  return 0;
}
