/* A program written for ABI 1.0: compiled against max_c_1_0.h alone (a byte copy of the 1.0
 * header that never changes), linked and run against today's libmax_c.so.1. Whatever the
 * library adds in 1.x, this program must keep building unchanged and passing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "max_c_1_0.h"

#if MAX_ABI_VERSION_MAJOR != 1 || MAX_ABI_VERSION_MINOR != 0
#error "frozen/max_c_1_0.h must be the 1.0 header"
#endif

static void ok(max_status_t* status) {
  if (status) {
    char message[512];
    strncpy(message, max_status_message(status), sizeof message - 1);
    message[sizeof message - 1] = '\0';
    max_status_release(status);
    fail_msg("unexpected failure: %s", message);
  }
}

static void check_abi_at_load(void** state) {
  (void)state;
  ok(max_check_abi(MAX_ABI_VERSION));
  assert_int_equal(max_abi_version() >> 16, 1);
  assert_true(max_abi_version() >= MAX_ABI_VERSION); /* same major, minor 0 or later */
}

static void context(void** state) {
  max_context_options_t options;
  max_context_t* ctx = NULL;
  max_device_t* cpu = NULL;
  max_device_t* got = NULL;
  size_t n = 0;
  int32_t threads = 0;
  (void)state;
  ok(max_device_create(MAX_DEVICE_KIND_CPU, 0, &cpu));
  /* a 1.0 program's struct_size is the 1.0 sizeof: the library defaults any newer field */
  ok(max_context_options_init(&options, sizeof options));
  options.devices = &cpu;
  options.num_devices = 1;
  options.num_threads = 2;
  ok(max_context_create(&options, &ctx));
  ok(max_context_num_threads(ctx, &threads));
  assert_int_equal(threads, 2);
  ok(max_context_num_devices(ctx, &n));
  assert_int_equal(n, 1);
  ok(max_context_device(ctx, 0, &got));
  assert_ptr_equal(got, cpu);
  max_device_release(got);
  max_device_release(cpu);
  max_context_release(ctx);
}

static void tensors(void** state) {
  const int64_t dims[2] = {2, 3};
  const float values[6] = {1, 2, 3, 4, 5, 6};
  float back[6] = {0};
  max_tensor_t *t = NULL, *view = NULL;
  max_tensor_list_t* list = NULL;
  const int64_t flat[1] = {6};
  int64_t n = 0;
  size_t size = 0;
  max_status_t* status;
  (void)state;
  ok(max_tensor_create_from_host(NULL, MAX_DTYPE_FLOAT32, dims, 2, values, sizeof values, &t));
  ok(max_tensor_num_elements(t, &n));
  assert_int_equal(n, 6);
  ok(max_tensor_view(t, MAX_DTYPE_INT32, flat, 1, &view));
  ok(max_tensor_list_create(&list));
  ok(max_tensor_list_append(list, view));
  ok(max_tensor_list_size(list, &size));
  assert_int_equal(size, 1);
  ok(max_tensor_to_host(t, back, sizeof back));
  assert_memory_equal(back, values, sizeof values);
  status = max_tensor_to_host(t, back, 4);
  assert_int_equal(max_status_code(status), MAX_STATUS_INVALID_ARGUMENT);
  max_status_release(status);
  max_tensor_list_release(list);
  max_tensor_release(view);
  max_tensor_release(t);
}

static int g_deleted;
static void deleter(DLManagedTensorVersioned* self) {
  (void)self;
  ++g_deleted;
}

static void dlpack(void** state) {
  float data[4] = {1, 2, 3, 4};
  int64_t shape[1] = {4};
  DLManagedTensorVersioned producer;
  DLManagedTensorVersioned* exported = NULL;
  max_tensor_t* t = NULL;
  float back[4];
  (void)state;
  memset(&producer, 0, sizeof producer);
  producer.version.major = DLPACK_MAJOR_VERSION;
  producer.version.minor = DLPACK_MINOR_VERSION;
  producer.deleter = deleter;
  producer.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
  producer.dl_tensor.data = data;
  producer.dl_tensor.device.device_type = kDLCPU;
  producer.dl_tensor.ndim = 1;
  producer.dl_tensor.dtype.code = kDLFloat;
  producer.dl_tensor.dtype.bits = 32;
  producer.dl_tensor.dtype.lanes = 1;
  producer.dl_tensor.shape = shape;
  ok(max_tensor_from_dlpack(&producer, &t));
  ok(max_tensor_to_host(t, back, sizeof back));
  assert_memory_equal(back, data, sizeof data);
  ok(max_tensor_to_dlpack(t, &exported));
  assert_true((exported->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0);
  assert_non_null(exported->dl_tensor.strides);
  max_tensor_release(t);
  assert_int_equal(g_deleted, 0);
  exported->deleter(exported);
  assert_int_equal(g_deleted, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(check_abi_at_load),
      cmocka_unit_test(context),
      cmocka_unit_test(tensors),
      cmocka_unit_test(dlpack),
  };
  return cmocka_run_group_tests_name("1.0 client on today's library", tests, NULL, NULL);
}
