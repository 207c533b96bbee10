/* The graph ABI (1.1) through the header only: building graphs with symbolic and algebraic
 * dims, the errors of max_graph_add_op (and that a failed call leaves the graph as it was),
 * attrs handles, registry introspection, MAXG serialization, text and DOT, subgraphs. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close, unlink */

#include "abi_test.h"

#include <unistd.h>

/* ---- helpers ------------------------------------------------------------------------------ */

static max_graph_t* new_graph(const char* name) {
  max_graph_t* g = NULL;
  EXPECT_OK(max_graph_create(name, &g));
  assert_non_null(g);
  return g;
}

static max_value_t* input(max_graph_t* g, const char* name, max_dtype_t dtype, const max_dim_t* dims,
                          int32_t rank) {
  max_value_t* v = NULL;
  EXPECT_OK(max_graph_add_input(g, name, dtype, dims, rank, MAX_DEVICE_REF_CPU, 0, &v));
  assert_non_null(v);
  return v;
}

static max_value_t* weight(max_graph_t* g, const char* name, max_dtype_t dtype, const max_dim_t* dims,
                           int32_t rank) {
  max_value_t* v = NULL;
  EXPECT_OK(max_graph_add_weight(g, name, dtype, dims, rank, MAX_DEVICE_REF_CPU, 0, &v));
  assert_non_null(v);
  return v;
}

/* An op with exactly one output. */
static max_value_t* op1(max_graph_t* g, const char* op, max_value_t* const* inputs, size_t n,
                        const max_attrs_t* attrs) {
  max_value_t* out[1] = {NULL};
  size_t count = 0;
  EXPECT_OK(max_graph_add_op(g, op, 0, inputs, n, attrs, out, 1, &count));
  assert_int_equal(count, 1);
  assert_non_null(out[0]);
  return out[0];
}

static max_value_t* unary(max_graph_t* g, const char* op, max_value_t* x) { return op1(g, op, &x, 1, NULL); }

static max_value_t* binary(max_graph_t* g, const char* op, max_value_t* a, max_value_t* b) {
  max_value_t* in[2] = {a, b};
  return op1(g, op, in, 2, NULL);
}

static size_t num_ops(const max_graph_t* g) {
  size_t n = 0;
  EXPECT_OK(max_graph_num_ops(g, &n));
  return n;
}

/* The bytes of a buffer, checked to be NUL-terminated with the size excluding the NUL. */
static const char* buffer_text(const max_buffer_t* b, size_t* out_size) {
  const void* data = NULL;
  size_t size = 0;
  EXPECT_OK(max_buffer_data(b, &data));
  EXPECT_OK(max_buffer_size(b, &size));
  assert_non_null(data);
  assert_int_equal(((const char*)data)[size], '\0');
  if (out_size) *out_size = size;
  return (const char*)data;
}

/* The graph as text, in a malloc'd string (caller frees). */
static char* text_of(const max_graph_t* g) {
  max_buffer_t* b = NULL;
  size_t size = 0;
  const char* text;
  char* copy;
  EXPECT_OK(max_graph_to_text(g, &b));
  text = buffer_text(b, &size);
  assert_int_equal(strlen(text), size);
  copy = (char*)malloc(size + 1);
  assert_non_null(copy);
  memcpy(copy, text, size + 1);
  max_buffer_release(b);
  return copy;
}

static void expect_type(const max_value_t* v, max_dtype_t dtype, const char* type_string) {
  max_dtype_t d = 0;
  const char* text = NULL;
  max_device_ref_kind_t kind = -1;
  int32_t id = -1;
  EXPECT_OK(max_value_dtype(v, &d));
  assert_int_equal(d, dtype);
  EXPECT_OK(max_value_type_string(v, &text));
  assert_non_null(text);
  assert_string_equal(text, type_string);
  EXPECT_OK(max_value_device(v, &kind, &id));
  assert_int_equal(kind, MAX_DEVICE_REF_CPU);
  assert_int_equal(id, 0);
}

static void expect_rank(const max_value_t* v, int32_t rank) {
  int32_t r = -1;
  EXPECT_OK(max_value_rank(v, &r));
  assert_int_equal(r, rank);
}

/* Dim `index` of v: `size` (-1 when not static) and its canonical text. */
static void expect_dim(const max_value_t* v, int32_t index, int64_t size, const char* expr) {
  int64_t s = -2;
  const char* e = NULL;
  EXPECT_OK(max_value_dim(v, index, &s, &e));
  assert_int_equal(s, size);
  assert_non_null(e);
  assert_string_equal(e, expr);
}

/* A failed call must leave the graph as it was: same op count, same printed text. */
typedef struct {
  size_t num_ops;
  char* text;
} snapshot_t;

static snapshot_t take_snapshot(const max_graph_t* g) {
  snapshot_t s;
  s.num_ops = num_ops(g);
  s.text = text_of(g);
  return s;
}

static void expect_unchanged(const max_graph_t* g, snapshot_t* before) {
  char* now = text_of(g);
  assert_int_equal(num_ops(g), before->num_ops);
  assert_string_equal(now, before->text);
  free(now);
}

static void free_snapshot(snapshot_t* s) { free(s->text); }

/* ---- the two-layer MLP -------------------------------------------------------------------- */

static const max_dim_t kBatch16[2] = {{0, "batch"}, {16, NULL}};

typedef struct {
  max_graph_t* g;
  max_value_t *x, *w1, *b1, *w2, *y;
} mlp_t;

/* x: float32 [batch, 16]; w1 [16, 32] and b1 [32] external weights; w2 [32, 4] a constant;
 * y = relu(x @ w1 + b1) @ w2, output "logits". */
static mlp_t build_mlp(void) {
  static const max_dim_t w1_dims[2] = {{16, NULL}, {32, NULL}};
  static const max_dim_t b1_dims[1] = {{32, NULL}};
  const int64_t w2_dims[2] = {32, 4};
  float w2_values[32 * 4];
  const char* names[1] = {"logits"};
  max_tensor_t* w2_tensor;
  mlp_t m;
  size_t i;
  for (i = 0; i < 32 * 4; ++i) w2_values[i] = (float)i / 8.0f;

  m.g = new_graph("mlp");
  m.x = input(m.g, "x", MAX_DTYPE_FLOAT32, kBatch16, 2);
  m.w1 = weight(m.g, "w1", MAX_DTYPE_FLOAT32, w1_dims, 2);
  m.b1 = weight(m.g, "b1", MAX_DTYPE_FLOAT32, b1_dims, 1);
  w2_tensor = make_tensor_f32(w2_dims, 2, w2_values, 32 * 4);
  EXPECT_OK(max_graph_add_constant(m.g, w2_tensor, &m.w2));
  max_tensor_release(w2_tensor); /* the graph keeps a copy */
  m.y = binary(m.g, "matmul", unary(m.g, "relu", binary(m.g, "add", binary(m.g, "matmul", m.x, m.w1), m.b1)),
               m.w2);
  EXPECT_OK(max_graph_set_outputs(m.g, &m.y, names, 1));
  return m;
}

static void mlp_builds_with_symbolic_batch(void** state) {
  mlp_t m = build_mlp();
  max_value_t* v = NULL;
  const char* name = NULL;
  size_t n = 0;
  (void)state;

  EXPECT_OK(max_graph_name(m.g, &name));
  assert_string_equal(name, "mlp");

  expect_type(m.x, MAX_DTYPE_FLOAT32, "tensor<[batch, 16], float32, cpu:0>");
  expect_rank(m.x, 2);
  expect_dim(m.x, 0, -1, "batch");
  expect_dim(m.x, 1, 16, "16");

  expect_type(m.w1, MAX_DTYPE_FLOAT32, "tensor<[16, 32], float32, cpu:0>");
  expect_type(m.b1, MAX_DTYPE_FLOAT32, "tensor<[32], float32, cpu:0>");
  expect_rank(m.b1, 1);
  expect_type(m.w2, MAX_DTYPE_FLOAT32, "tensor<[32, 4], float32, cpu:0>");

  expect_type(m.y, MAX_DTYPE_FLOAT32, "tensor<[batch, 4], float32, cpu:0>");
  expect_rank(m.y, 2);
  expect_dim(m.y, 0, -1, "batch");
  expect_dim(m.y, 1, 4, "4");

  /* inputs and outputs, by index and name; a value's handle is stable */
  EXPECT_OK(max_graph_num_inputs(m.g, &n));
  assert_int_equal(n, 1);
  EXPECT_OK(max_graph_input(m.g, 0, &v, &name));
  assert_ptr_equal(v, m.x);
  assert_string_equal(name, "x");
  EXPECT_OK(max_graph_num_outputs(m.g, &n));
  assert_int_equal(n, 1);
  EXPECT_OK(max_graph_output(m.g, 0, &v, &name));
  assert_ptr_equal(v, m.y);
  assert_string_equal(name, "logits");
  EXPECT_OK(max_graph_output(m.g, 0, &v, NULL)); /* the name is optional */
  assert_ptr_equal(v, m.y);

  /* 2 weights (constant_external), 1 constant, matmul, add, relu, matmul */
  assert_int_equal(num_ops(m.g), 7);
  EXPECT_OK(max_graph_verify(m.g));

  /* outputs without names are "output<i>"; set_outputs replaces */
  {
    max_value_t* outs[2] = {m.y, m.x};
    EXPECT_OK(max_graph_set_outputs(m.g, outs, NULL, 2));
    EXPECT_OK(max_graph_num_outputs(m.g, &n));
    assert_int_equal(n, 2);
    EXPECT_OK(max_graph_output(m.g, 1, &v, &name));
    assert_ptr_equal(v, m.x);
    assert_string_equal(name, "output1");
  }

  /* retain/release: the graph (and its values) live until the last reference goes */
  max_graph_retain(m.g);
  max_graph_release(m.g);
  expect_dim(m.y, 0, -1, "batch");
  max_graph_release(m.g);
}

static void default_graph_name_is_main(void** state) {
  max_graph_t* g = new_graph(NULL);
  const char* name = NULL;
  size_t n = 99;
  (void)state;
  EXPECT_OK(max_graph_name(g, &name));
  assert_string_equal(name, "main");
  EXPECT_OK(max_graph_num_inputs(g, &n));
  assert_int_equal(n, 0);
  EXPECT_OK(max_graph_num_outputs(g, &n));
  assert_int_equal(n, 0);
  assert_int_equal(num_ops(g), 0);
  EXPECT_OK(max_graph_verify(g));
  max_graph_release(g);
}

/* ---- algebraic dims ------------------------------------------------------------------------ */

static void algebraic_dims_are_canonical(void** state) {
  max_graph_t* g = new_graph("dims");
  const max_dim_t a_dims[2] = {{0, "batch * 2"}, {8, NULL}};
  const max_dim_t b_dims[2] = {{0, "2 * batch"}, {8, NULL}};
  const max_dim_t c_dims[2] = {{0, "batch*2"}, {0, "(4 + 4)"}};
  const max_dim_t s_dims[1] = {{0, "seq"}};
  const max_dim_t h_dims[1] = {{0, "(seq + 1) // 2"}};
  max_value_t *a, *b, *c, *s, *h, *sum, *cat, *flat, *both[2];
  max_attrs_t* attrs = NULL;
  int64_t size = 0;
  (void)state;

  a = input(g, "a", MAX_DTYPE_FLOAT32, a_dims, 2);
  b = input(g, "b", MAX_DTYPE_FLOAT32, b_dims, 2);
  c = input(g, "c", MAX_DTYPE_FLOAT32, c_dims, 2);
  s = input(g, "s", MAX_DTYPE_FLOAT32, s_dims, 1);
  h = input(g, "h", MAX_DTYPE_FLOAT32, h_dims, 1);

  /* three spellings, one canonical form; a static expression folds to its value */
  expect_dim(a, 0, -1, "batch * 2");
  expect_dim(b, 0, -1, "batch * 2");
  expect_dim(c, 0, -1, "batch * 2");
  expect_dim(c, 1, 8, "8");
  expect_type(b, MAX_DTYPE_FLOAT32, "tensor<[batch * 2, 8], float32, cpu:0>");
  expect_dim(h, 0, -1, "(seq + 1) // 2");

  /* equal dims broadcast as equal: a + b keeps [batch * 2, 8] */
  sum = binary(g, "add", a, b);
  expect_dim(sum, 0, -1, "batch * 2");
  EXPECT_OK(max_value_dim(sum, 1, &size, NULL));
  assert_int_equal(size, 8);

  /* inferred dims are expressions: concat on axis 0 adds them, flatten multiplies */
  both[0] = a;
  both[1] = c;
  cat = op1(g, "concat", both, 2, NULL);
  expect_dim(cat, 0, -1, "batch * 4");
  flat = unary(g, "flatten", a);
  expect_rank(flat, 1);
  expect_dim(flat, 0, -1, "batch * 16");
  both[0] = s;
  both[1] = h;
  cat = op1(g, "concat", both, 2, NULL);
  expect_dim(cat, 0, -1, "seq + (seq + 1) // 2");

  /* reshape to an expression given through max_attrs_set_dims */
  {
    const max_dim_t shape[2] = {{0, "2*batch"}, {0, "2 * 4"}};
    max_value_t* r;
    EXPECT_OK(max_attrs_create(&attrs));
    EXPECT_OK(max_attrs_set_dims(attrs, "shape", shape, 2));
    r = op1(g, "reshape", &b, 1, attrs);
    expect_type(r, MAX_DTYPE_FLOAT32, "tensor<[batch * 2, 8], float32, cpu:0>");
    max_attrs_release(attrs);
  }
  EXPECT_OK(max_graph_verify(g));
  max_graph_release(g);
}

/* ---- errors leave the graph unchanged ------------------------------------------------------ */

static void add_op_errors_name_the_op_and_leave_the_graph_unchanged(void** state) {
  mlp_t m = build_mlp();
  const max_dim_t i_dims[2] = {{16, NULL}, {32, NULL}};
  const max_dim_t five[1] = {{5, NULL}};
  max_value_t *ints, *v5, *in[3], *outs[2] = {NULL, NULL};
  max_attrs_t* attrs = NULL;
  size_t count = 99;
  snapshot_t before;
  (void)state;
  ints = input(m.g, "i", MAX_DTYPE_INT32, i_dims, 2);
  v5 = input(m.g, "v5", MAX_DTYPE_FLOAT32, five, 1);
  before = take_snapshot(m.g);

  /* unknown op: NOT_FOUND naming it */
  in[0] = m.x;
  EXPECT_STATUS(max_graph_add_op(m.g, "frobnicate", 0, in, 1, NULL, outs, 2, &count),
                MAX_STATUS_NOT_FOUND, "max_graph_add_op", "'frobnicate'");
  assert_int_equal(count, 0);
  expect_unchanged(m.g, &before);

  /* wrong arity: the op and its inputs */
  EXPECT_STATUS(max_graph_add_op(m.g, "add", 0, in, 1, NULL, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'add'", "lhs", "rhs", "got 1");
  in[1] = m.x;
  in[2] = m.x;
  EXPECT_STATUS(max_graph_add_op(m.g, "relu", 0, in, 3, NULL, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'relu'", "got 3");
  expect_unchanged(m.g, &before);

  /* dtype mismatch: matmul of float32 and int32 */
  in[0] = m.x;
  in[1] = ints;
  EXPECT_STATUS(max_graph_add_op(m.g, "matmul", 0, in, 2, NULL, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'matmul'", "'rhs'", "int32", "float32");
  expect_unchanged(m.g, &before);

  /* shape mismatch: [batch, 16] @ [32, 4], and [batch, 16] + [5] */
  in[1] = m.w2;
  EXPECT_STATUS(max_graph_add_op(m.g, "matmul", 0, in, 2, NULL, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'matmul'", "'lhs'", "'rhs'", "[32, 4]");
  in[1] = v5;
  EXPECT_STATUS(max_graph_add_op(m.g, "add", 0, in, 2, NULL, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'add'", "'rhs'", "[5]");
  expect_unchanged(m.g, &before);

  /* attributes: unknown, missing, wrong kind */
  EXPECT_OK(max_attrs_create(&attrs));
  EXPECT_OK(max_attrs_set_int(attrs, "axes", 1));
  EXPECT_STATUS(max_graph_add_op(m.g, "softmax", 0, in, 1, attrs, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'softmax'", "unknown attribute 'axes'", "axis");
  max_attrs_release(attrs);
  EXPECT_STATUS(max_graph_add_op(m.g, "top_k", 0, in, 1, NULL, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'top_k'", "missing required attribute 'k'");
  EXPECT_OK(max_attrs_create(&attrs));
  EXPECT_OK(max_attrs_set_float(attrs, "axis", 1.0));
  EXPECT_STATUS(max_graph_add_op(m.g, "softmax", 0, in, 1, attrs, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'softmax'", "attribute 'axis'", "int", "float");
  /* an attribute value the op refuses */
  EXPECT_OK(max_attrs_set_int(attrs, "axis", 5));
  EXPECT_STATUS(max_graph_add_op(m.g, "softmax", 0, in, 1, attrs, outs, 2, &count),
                MAX_STATUS_INVALID_ARGUMENT, "op 'softmax'", "5");
  max_attrs_release(attrs);
  expect_unchanged(m.g, &before);

  /* too little room for the outputs: OUT_OF_RANGE, the op is not added, and the count says
   * how much room it needs (NULL with capacity 0 asks for just that) */
  EXPECT_OK(max_attrs_create(&attrs));
  EXPECT_OK(max_attrs_set_int(attrs, "k", 3));
  count = 99;
  EXPECT_STATUS(max_graph_add_op(m.g, "top_k", 0, in, 1, attrs, outs, 1, &count),
                MAX_STATUS_OUT_OF_RANGE, "'top_k'", "2 output");
  assert_int_equal(count, 2);
  assert_null(outs[0]);
  count = 99;
  EXPECT_STATUS(max_graph_add_op(m.g, "top_k", 0, in, 1, attrs, NULL, 0, &count),
                MAX_STATUS_OUT_OF_RANGE, "'top_k'");
  assert_int_equal(count, 2);
  expect_unchanged(m.g, &before);
  count = 0;
  EXPECT_OK(max_graph_add_op(m.g, "top_k", 0, in, 1, attrs, outs, 2, &count));
  assert_int_equal(count, 2);
  assert_int_equal(num_ops(m.g), before.num_ops + 1);
  max_attrs_release(attrs);
  free_snapshot(&before);
  max_graph_release(m.g);
}

static void weights_declared_twice(void** state) {
  mlp_t m = build_mlp();
  const max_dim_t w1_dims[2] = {{16, NULL}, {32, NULL}};
  const max_dim_t other_dims[2] = {{16, NULL}, {33, NULL}};
  max_value_t* again = NULL;
  snapshot_t before = take_snapshot(m.g);
  (void)state;

  /* same type: the same value, no new op */
  EXPECT_OK(max_graph_add_weight(m.g, "w1", MAX_DTYPE_FLOAT32, w1_dims, 2, MAX_DEVICE_REF_CPU, 0, &again));
  assert_ptr_equal(again, m.w1);
  expect_unchanged(m.g, &before);

  /* another shape, dtype or device: INVALID_ARGUMENT naming the weight */
  again = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_add_weight(m.g, "w1", MAX_DTYPE_FLOAT32, other_dims, 2, MAX_DEVICE_REF_CPU, 0,
                                     &again),
                MAX_STATUS_INVALID_ARGUMENT, "'w1'", "[16, 32]", "[16, 33]");
  assert_null(again);
  EXPECT_STATUS(max_graph_add_weight(m.g, "w1", MAX_DTYPE_FLOAT16, w1_dims, 2, MAX_DEVICE_REF_CPU, 0,
                                     &again),
                MAX_STATUS_INVALID_ARGUMENT, "'w1'", "float16");
  EXPECT_STATUS(max_graph_add_weight(m.g, "w1", MAX_DTYPE_FLOAT32, w1_dims, 2, MAX_DEVICE_REF_GPU, 0,
                                     &again),
                MAX_STATUS_INVALID_ARGUMENT, "'w1'", "gpu:0");
  expect_unchanged(m.g, &before);
  free_snapshot(&before);
  max_graph_release(m.g);
}

/* ---- attrs --------------------------------------------------------------------------------- */

static void attrs_every_kind(void** state) {
  max_graph_t* g = new_graph("attrs");
  max_value_t* x = input(g, "x", MAX_DTYPE_FLOAT32, kBatch16, 2);
  max_attrs_t* a = NULL;
  max_value_t *v, *outs[4];
  size_t count = 0;
  (void)state;

  /* string, dtype, dims, device: a weight declared through the generic entry point */
  {
    const max_dim_t shape[2] = {{0, "batch"}, {0, "4 * 2"}};
    EXPECT_OK(max_attrs_create(&a));
    EXPECT_OK(max_attrs_set_string(a, "name", "emb"));
    EXPECT_OK(max_attrs_set_dtype(a, "dtype", MAX_DTYPE_BFLOAT16));
    EXPECT_OK(max_attrs_set_dims(a, "shape", shape, 2));
    EXPECT_OK(max_attrs_set_device(a, "device", MAX_DEVICE_REF_CPU, 0));
    v = op1(g, "constant_external", NULL, 0, a);
    expect_type(v, MAX_DTYPE_BFLOAT16, "tensor<[batch, 8], bfloat16, cpu:0>");
    /* the same as max_graph_add_weight with that type */
    {
      max_value_t* w = NULL;
      EXPECT_OK(max_graph_add_weight(g, "emb", MAX_DTYPE_BFLOAT16, shape, 2, MAX_DEVICE_REF_CPU, 0, &w));
      assert_ptr_equal(w, v);
    }
    /* replacing a value: the last set wins */
    EXPECT_OK(max_attrs_set_string(a, "name", "emb2"));
    EXPECT_OK(max_attrs_set_dtype(a, "dtype", MAX_DTYPE_INT8));
    v = op1(g, "constant_external", NULL, 0, a);
    expect_type(v, MAX_DTYPE_INT8, "tensor<[batch, 8], int8, cpu:0>");
    /* a string stored by copy */
    {
      char name[8] = "emb3";
      EXPECT_OK(max_attrs_set_string(a, "name", name));
      name[3] = '9';
      v = op1(g, "constant_external", NULL, 0, a);
      {
        char* text = text_of(g);
        assert_non_null(strstr(text, "emb3"));
        assert_null(strstr(text, "emb9"));
        free(text);
      }
    }
    max_attrs_release(a);
  }

  /* int, replaced: top_k's k, two outputs of different dtypes */
  EXPECT_OK(max_attrs_create(&a));
  EXPECT_OK(max_attrs_set_int(a, "k", 2));
  EXPECT_OK(max_attrs_set_int(a, "k", 3));
  EXPECT_OK(max_graph_add_op(g, "top_k", 0, &x, 1, a, outs, 4, &count));
  assert_int_equal(count, 2);
  expect_type(outs[0], MAX_DTYPE_FLOAT32, "tensor<[batch, 3], float32, cpu:0>");
  expect_type(outs[1], MAX_DTYPE_INT64, "tensor<[batch, 3], int64, cpu:0>");
  max_attrs_release(a);

  /* dims and int: split into three outputs */
  {
    const max_dim_t sizes[3] = {{4, NULL}, {0, "2 * 3"}, {6, NULL}};
    EXPECT_OK(max_attrs_create(&a));
    EXPECT_OK(max_attrs_set_dims(a, "split_sizes", sizes, 3));
    EXPECT_OK(max_attrs_set_int(a, "axis", 1));
    count = 0;
    EXPECT_OK(max_graph_add_op(g, "split", 0, &x, 1, a, outs, 4, &count));
    assert_int_equal(count, 3);
    expect_dim(outs[0], 1, 4, "4");
    expect_dim(outs[1], 1, 6, "6");
    expect_dim(outs[2], 0, -1, "batch");
    /* a kind change replaces too: axis as a float is now refused */
    EXPECT_OK(max_attrs_set_float(a, "axis", 1.0));
    EXPECT_STATUS(max_graph_add_op(g, "split", 0, &x, 1, a, outs, 4, &count), MAX_STATUS_INVALID_ARGUMENT,
                  "op 'split'", "attribute 'axis'");
    max_attrs_release(a);
  }

  /* float: layer_norm's epsilon */
  {
    const max_dim_t d16[1] = {{16, NULL}};
    max_value_t* in[3];
    in[0] = x;
    in[1] = weight(g, "gamma", MAX_DTYPE_FLOAT32, d16, 1);
    in[2] = weight(g, "beta", MAX_DTYPE_FLOAT32, d16, 1);
    EXPECT_OK(max_attrs_create(&a));
    EXPECT_OK(max_attrs_set_float(a, "epsilon", -1.0));
    EXPECT_STATUS(max_graph_add_op(g, "layer_norm", 0, in, 3, a, outs, 1, &count), MAX_STATUS_INVALID_ARGUMENT,
                  "op 'layer_norm'", "epsilon");
    EXPECT_OK(max_attrs_set_float(a, "epsilon", 1e-5));
    v = op1(g, "layer_norm", in, 3, a);
    expect_type(v, MAX_DTYPE_FLOAT32, "tensor<[batch, 16], float32, cpu:0>");
    max_attrs_release(a);
  }

  /* bool: cumsum's exclusive/reverse */
  EXPECT_OK(max_attrs_create(&a));
  EXPECT_OK(max_attrs_set_bool(a, "exclusive", 1));
  EXPECT_OK(max_attrs_set_bool(a, "reverse", 0));
  v = op1(g, "cumsum", &x, 1, a);
  expect_type(v, MAX_DTYPE_FLOAT32, "tensor<[batch, 16], float32, cpu:0>");
  max_attrs_release(a);

  /* ints: permute */
  {
    const int64_t perm[2] = {1, 0};
    EXPECT_OK(max_attrs_create(&a));
    EXPECT_OK(max_attrs_set_ints(a, "dims", perm, 2));
    v = op1(g, "permute", &x, 1, a);
    expect_type(v, MAX_DTYPE_FLOAT32, "tensor<[16, batch], float32, cpu:0>");
    max_attrs_release(a);
  }

  /* floats and graph: no P0 op takes them, so an op refuses them by kind, naming both kinds */
  {
    const double fs[2] = {0.5, 1.5};
    EXPECT_OK(max_attrs_create(&a));
    EXPECT_OK(max_attrs_set_floats(a, "axis", fs, 2));
    EXPECT_STATUS(max_graph_add_op(g, "softmax", 0, &x, 1, a, outs, 1, &count), MAX_STATUS_INVALID_ARGUMENT,
                  "op 'softmax'", "attribute 'axis'", "float");
    EXPECT_OK(max_attrs_set_graph(a, "axis", 0));
    EXPECT_STATUS(max_graph_add_op(g, "softmax", 0, &x, 1, a, outs, 1, &count), MAX_STATUS_INVALID_ARGUMENT,
                  "op 'softmax'", "attribute 'axis'", "graph");
    EXPECT_OK(max_attrs_set_int(a, "axis", 0)); /* and replaced by a good one */
    v = op1(g, "softmax", &x, 1, a);
    expect_type(v, MAX_DTYPE_FLOAT32, "tensor<[batch, 16], float32, cpu:0>");
    max_attrs_release(a);
  }

  /* the attrs handle may be released before the graph, and reused across graphs */
  EXPECT_OK(max_graph_verify(g));
  max_graph_release(g);
}

/* ---- the op registry ----------------------------------------------------------------------- */

static int cmp_str(const void* a, const void* b) { return strcmp(*(const char* const*)a, *(const char* const*)b); }

static int find_attr(const char* op, const char* attr, max_attr_kind_t* kind, max_op_attr_presence_t* presence) {
  size_t n = 0, i;
  EXPECT_OK(max_op_num_attrs(op, 0, &n));
  for (i = 0; i < n; ++i) {
    const char* name = NULL;
    EXPECT_OK(max_op_attr(op, 0, i, &name, kind, presence));
    if (strcmp(name, attr) == 0) return 1;
  }
  return 0;
}

static void registry_introspection(void** state) {
  size_t n = 0, i, count = 0;
  const char** names;
  const char* name = NULL;
  int32_t version = 0;
  max_attr_kind_t kind = -1;
  max_op_attr_presence_t presence = -1;
  max_op_input_arity_t arity = -1;
  (void)state;

  EXPECT_OK(max_op_count(&n));
  assert_true(n > 80);
  names = (const char**)calloc(n, sizeof *names);
  assert_non_null(names);
  for (i = 0; i < n; ++i) {
    EXPECT_OK(max_op_at(i, &names[i], &version));
    assert_non_null(names[i]);
    assert_true(names[i][0] != '\0');
    assert_true(version >= 1);
    /* listed sorted by name */
    if (i > 0) assert_true(strcmp(names[i - 1], names[i]) <= 0);
  }
  /* one version per op today, so every name is unique */
  qsort(names, n, sizeof *names, cmp_str);
  for (i = 1; i < n; ++i)
    if (strcmp(names[i - 1], names[i]) == 0) fail_msg("op '%s' is listed twice", names[i]);
  /* the P0 ops a model needs are there */
  {
    static const char* const want[] = {"add", "matmul", "relu", "softmax", "top_k", "split", "concat",
                                       "reshape", "constant", "constant_external", "layer_norm", "gather",
                                       "conv2d", "where", "cast", "range"};
    size_t w;
    for (w = 0; w < sizeof want / sizeof want[0]; ++w)
      if (!bsearch(&want[w], names, n, sizeof *names, cmp_str)) fail_msg("op '%s' is not registered", want[w]);
  }
  free(names);

  /* matmul(lhs, rhs), no attributes */
  EXPECT_OK(max_op_num_inputs("matmul", 0, &count));
  assert_int_equal(count, 2);
  EXPECT_OK(max_op_input("matmul", 0, 0, &name, &arity));
  assert_string_equal(name, "lhs");
  assert_int_equal(arity, MAX_OP_INPUT_ONE);
  EXPECT_OK(max_op_input("matmul", 1, 1, &name, &arity)); /* version 1 explicitly */
  assert_string_equal(name, "rhs");
  EXPECT_OK(max_op_num_attrs("matmul", 0, &count));
  assert_int_equal(count, 0);

  /* softmax: attr axis, an int with a default */
  assert_true(find_attr("softmax", "axis", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_INT);
  assert_int_equal(presence, MAX_OP_ATTR_DEFAULTED);
  /* top_k: k is a required int */
  assert_true(find_attr("top_k", "k", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_INT);
  assert_int_equal(presence, MAX_OP_ATTR_REQUIRED);
  /* split_sizes: dims; layer_norm epsilon: float; cumsum exclusive: bool; permute dims: ints */
  assert_true(find_attr("split", "split_sizes", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_DIMS);
  assert_true(find_attr("layer_norm", "epsilon", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_FLOAT);
  assert_true(find_attr("cumsum", "exclusive", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_BOOL);
  assert_true(find_attr("permute", "dims", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_INTS);
  /* constant_external: string, dtype, dims, device */
  assert_true(find_attr("constant_external", "name", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_STRING);
  assert_true(find_attr("constant_external", "dtype", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_DTYPE);
  assert_true(find_attr("constant_external", "device", &kind, &presence));
  assert_int_equal(kind, MAX_ATTR_DEVICE);
  assert_false(find_attr("softmax", "axes", &kind, &presence));

  /* concat takes a variadic input; max an optional second one */
  EXPECT_OK(max_op_num_inputs("concat", 0, &count));
  assert_int_equal(count, 1);
  EXPECT_OK(max_op_input("concat", 0, 0, &name, &arity));
  assert_int_equal(arity, MAX_OP_INPUT_VARIADIC);
  EXPECT_OK(max_op_num_inputs("max", 0, &count));
  assert_int_equal(count, 2);
  EXPECT_OK(max_op_input("max", 0, 1, &name, &arity));
  assert_int_equal(arity, MAX_OP_INPUT_OPTIONAL);

  /* unknown op */
  EXPECT_STATUS(max_op_num_inputs("frobnicate", 0, &count), MAX_STATUS_NOT_FOUND, "'frobnicate'");
  EXPECT_STATUS(max_op_num_attrs("frobnicate", 0, &count), MAX_STATUS_NOT_FOUND, "'frobnicate'");
  EXPECT_STATUS(max_op_input("frobnicate", 0, 0, &name, &arity), MAX_STATUS_NOT_FOUND, "'frobnicate'");
  EXPECT_STATUS(max_op_attr("frobnicate", 0, 0, &name, &kind, &presence), MAX_STATUS_NOT_FOUND, "'frobnicate'");
}

/* ---- serialization ------------------------------------------------------------------------- */

static max_buffer_t* serialize(const max_graph_t* g, const unsigned char** data, size_t* size) {
  max_buffer_t* b = NULL;
  const void* d = NULL;
  EXPECT_OK(max_graph_serialize(g, &b));
  EXPECT_OK(max_buffer_data(b, &d));
  EXPECT_OK(max_buffer_size(b, size));
  assert_true(*size > 0);
  *data = (const unsigned char*)d;
  return b;
}

/* The MLP plus a constant large enough for the data segment, and a subgraph. */
static max_graph_t* build_rich_graph(void) {
  mlp_t m = build_mlp();
  const int64_t big_dims[2] = {64, 64};
  static float big[64 * 64];
  max_tensor_t* t;
  max_value_t* c = NULL;
  max_graph_t* sub = new_graph("sub");
  int64_t index = -1;
  size_t i;
  for (i = 0; i < 64 * 64; ++i) big[i] = (float)i;
  t = make_tensor_f32(big_dims, 2, big, 64 * 64);
  EXPECT_OK(max_graph_add_constant(m.g, t, &c));
  max_tensor_release(t);
  expect_type(c, MAX_DTYPE_FLOAT32, "tensor<[64, 64], float32, cpu:0>");
  (void)unary(sub, "relu", input(sub, "s", MAX_DTYPE_FLOAT32, kBatch16, 2));
  EXPECT_OK(max_graph_add_subgraph(m.g, sub, &index));
  assert_int_equal(index, 0);
  max_graph_release(sub);
  return m.g;
}

static void serialize_round_trip_is_byte_identical(void** state) {
  max_graph_t* g = build_rich_graph();
  max_graph_t* back = NULL;
  const unsigned char *a, *b;
  size_t na = 0, nb = 0;
  max_buffer_t *ba, *bb;
  char *text_g, *text_back;
  (void)state;

  ba = serialize(g, &a, &na);
  EXPECT_OK(max_graph_deserialize(a, na, &back));
  assert_non_null(back);
  bb = serialize(back, &b, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  text_g = text_of(g);
  text_back = text_of(back);
  assert_string_equal(text_g, text_back);
  EXPECT_OK(max_graph_verify(back));
  /* the image is copied: the loaded graph outlives the buffer */
  max_buffer_release(ba);
  max_buffer_release(bb);
  max_graph_release(g);
  {
    char* again = text_of(back);
    assert_string_equal(again, text_back);
    free(again);
  }
  free(text_g);
  free(text_back);
  max_graph_release(back);
}

static void save_and_load(void** state) {
  max_graph_t* g = build_rich_graph();
  max_graph_t* back = NULL;
  char path[] = "/tmp/max_c_graph_test_XXXXXX";
  char *text_g, *text_back;
  max_value_t* y = NULL;
  const char* name = NULL;
  int fd;
  (void)state;

  fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  EXPECT_OK(max_graph_save(g, path));
  EXPECT_OK(max_graph_load(path, &back));
  assert_non_null(back);
  text_g = text_of(g);
  text_back = text_of(back);
  assert_string_equal(text_g, text_back);
  /* the loaded graph keeps its names, types and symbolic dims */
  EXPECT_OK(max_graph_output(back, 0, &y, &name));
  assert_string_equal(name, "logits");
  expect_dim(y, 0, -1, "batch");
  expect_type(y, MAX_DTYPE_FLOAT32, "tensor<[batch, 4], float32, cpu:0>");
  /* the file may go away while the graph lives (its mapping stays valid) */
  assert_int_equal(unlink(path), 0);
  max_graph_release(g);
  EXPECT_OK(max_graph_verify(back));
  max_graph_release(back);
  free(text_g);
  free(text_back);

  /* a missing file */
  back = SENTINEL_PTR;
  EXPECT_STATUS(max_graph_load(path, &back), MAX_STATUS_NOT_FOUND, path);
  assert_null(back);
}

static void expect_load_failure(const unsigned char* data, size_t size, const char* what) {
  max_graph_t* g = SENTINEL_PTR;
  max_status_t* s = max_graph_deserialize(data, size, &g);
  max_status_code_t code = max_status_code(s);
  if (code != MAX_STATUS_DATA_LOSS && code != MAX_STATUS_INVALID_ARGUMENT)
    fail_msg("%s: deserialize gave %s (\"%s\"), expected DATA_LOSS or INVALID_ARGUMENT", what,
             max_status_code_name(code), max_status_message(s));
  assert_true(max_status_message(s)[0] != '\0');
  max_status_release(s);
  assert_null(g);
}

static void corrupt_images_are_refused(void** state) {
  max_graph_t* g = build_rich_graph();
  const unsigned char* data;
  size_t size = 0, i, refused = 0;
  max_buffer_t* b = serialize(g, &data, &size);
  unsigned char* copy = (unsigned char*)malloc(size);
  char what[64];
  (void)state;
  assert_non_null(copy);

  /* every truncation: small ones everywhere, then a stride through the rest */
  for (i = 0; i < size; i += (i < 256 || size - i < 256) ? 1 : 61) {
    snprintf(what, sizeof what, "truncated to %zu of %zu bytes", i, size);
    expect_load_failure(data, i, what);
  }
  /* bytes flipped: the header always fails; elsewhere a flip may land in padding or a
   * constant's data and still load, but it never crashes and never gives another code.
   * Every byte of the first 4 KiB and the last 1 KiB, a stride through the (constant data)
   * middle. */
  for (i = 0; i < size; i += (i < 4096 || size - i <= 1024) ? 1 : 37) {
    max_graph_t* back = NULL;
    max_status_t* s;
    memcpy(copy, data, size);
    copy[i] ^= 0xff;
    s = max_graph_deserialize(copy, size, &back);
    if (s) {
      max_status_code_t code = max_status_code(s);
      if (code != MAX_STATUS_DATA_LOSS && code != MAX_STATUS_INVALID_ARGUMENT)
        fail_msg("byte %zu flipped: %s (\"%s\")", i, max_status_code_name(code), max_status_message(s));
      ++refused;
      assert_null(back);
      max_status_release(s);
    } else {
      if (i < 8) fail_msg("byte %zu of the header flipped, and the image still loads", i);
      max_graph_release(back);
    }
  }
  assert_true(refused > 0);
  /* the magic */
  memcpy(copy, data, size);
  copy[0] ^= 1;
  expect_load_failure(copy, size, "bad magic");
  max_buffer_release(b);
  free(copy);
  max_graph_release(g);
}

/* ---- text and DOT -------------------------------------------------------------------------- */

static void text_and_dot(void** state) {
  mlp_t m = build_mlp();
  max_buffer_t* b = NULL;
  size_t size = 0;
  const char* text;
  (void)state;

  EXPECT_OK(max_graph_to_text(m.g, &b));
  text = buffer_text(b, &size);
  assert_int_equal(strlen(text), size);
  assert_non_null(strstr(text, "graph mlp("));
  assert_non_null(strstr(text, "matmul("));
  assert_non_null(strstr(text, "add("));
  assert_non_null(strstr(text, "relu("));
  assert_non_null(strstr(text, "constant_external("));
  assert_non_null(strstr(text, "logits"));
  assert_non_null(strstr(text, "tensor<[batch, 16], float32, cpu:0>"));
  max_buffer_release(b);

  b = NULL;
  EXPECT_OK(max_graph_to_dot(m.g, &b));
  text = buffer_text(b, &size);
  assert_int_equal(strlen(text), size);
  assert_non_null(strstr(text, "digraph"));
  assert_non_null(strstr(text, "matmul"));
  assert_non_null(strstr(text, "add"));
  assert_non_null(strstr(text, "relu"));
  assert_int_equal(text[size - 1] == '\n' || text[size - 1] == '}', 1);
  max_buffer_release(b);
  max_graph_release(m.g);
}

/* ---- subgraphs ----------------------------------------------------------------------------- */

static void subgraphs_are_numbered(void** state) {
  max_graph_t* g = new_graph("outer");
  max_graph_t* body = new_graph("body");
  max_graph_t* cond = new_graph("cond");
  max_value_t* s;
  int64_t index = -1;
  char* text;
  (void)state;

  s = input(body, "s", MAX_DTYPE_FLOAT32, kBatch16, 2);
  EXPECT_OK(max_graph_set_outputs(body, &s, NULL, 1));
  EXPECT_OK(max_graph_add_subgraph(g, body, &index));
  assert_int_equal(index, 0);
  EXPECT_OK(max_graph_add_subgraph(g, cond, &index));
  assert_int_equal(index, 1);
  /* a copy: changing the original later does not change the subgraph */
  (void)unary(body, "relu", s);
  text = text_of(g);
  assert_non_null(strstr(text, "subgraph 0: graph body("));
  assert_non_null(strstr(text, "subgraph 1: graph cond("));
  assert_null(strstr(text, "relu"));
  free(text);
  /* a graph may hold a copy of itself */
  EXPECT_OK(max_graph_add_subgraph(g, g, &index));
  assert_int_equal(index, 2);
  EXPECT_OK(max_graph_verify(g));
  max_graph_release(cond);
  max_graph_release(body);
  max_graph_release(g);
}

/* ABI 1.5: a constant placed on a GPU carries that device in its type, so that a GPU graph's
 * scalars need not span devices; no GPU is needed to build such a graph. */
static void constants_are_placed_where_asked(void** state) {
  max_graph_t* g = new_graph("placed");
  const float half = 0.5f;
  max_tensor_t* t = NULL;
  max_value_t *on_host, *on_gpu;
  max_device_ref_kind_t kind = -1;
  int32_t id = -1;
  const char* text = NULL;
  (void)state;
  EXPECT_OK(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, NULL, 0, &half, sizeof half, &t));
  EXPECT_OK(max_graph_add_constant(g, t, &on_host));
  EXPECT_OK(max_graph_add_constant_on(g, t, MAX_DEVICE_REF_GPU, 1, &on_gpu));
  max_tensor_release(t);
  EXPECT_OK(max_value_device(on_host, &kind, &id));
  assert_int_equal(kind, MAX_DEVICE_REF_CPU);
  EXPECT_OK(max_value_device(on_gpu, &kind, &id));
  assert_int_equal(kind, MAX_DEVICE_REF_GPU);
  assert_int_equal(id, 1);
  EXPECT_OK(max_value_type_string(on_gpu, &text));
  assert_string_equal(text, "tensor<[], float32, gpu:1>");
  max_graph_release(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(constants_are_placed_where_asked),
      cmocka_unit_test(mlp_builds_with_symbolic_batch),
      cmocka_unit_test(default_graph_name_is_main),
      cmocka_unit_test(algebraic_dims_are_canonical),
      cmocka_unit_test(add_op_errors_name_the_op_and_leave_the_graph_unchanged),
      cmocka_unit_test(weights_declared_twice),
      cmocka_unit_test(attrs_every_kind),
      cmocka_unit_test(registry_introspection),
      cmocka_unit_test(serialize_round_trip_is_byte_identical),
      cmocka_unit_test(save_and_load),
      cmocka_unit_test(corrupt_images_are_refused),
      cmocka_unit_test(text_and_dot),
      cmocka_unit_test(subgraphs_are_numbered),
  };
  EXPECT_OK(max_check_abi(MAX_ABI_VERSION));
  return cmocka_run_group_tests_name("graph ABI", tests, NULL, NULL);
}
