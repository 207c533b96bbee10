/* Options structs across versions (DESIGN §2): max_context_options_t as an older program
 * (smaller struct_size), today's and a newer one (larger struct_size) pass it, and the
 * library reading and max_context_options_init writing only min(struct_size, its sizeof). */
#include "abi_test.h"

#define OLD_SIZE offsetof(max_context_options_t, num_threads) /* a struct from before num_threads */

/* A newer program's struct: ours plus fields this library does not know. */
typedef struct {
  max_context_options_t known;
  uint64_t future_a;
  uint64_t future_b;
} newer_options_t;

static int32_t context_threads(const max_context_t* context) {
  int32_t n = -1;
  EXPECT_OK(max_context_num_threads(context, &n));
  return n;
}

static int32_t default_threads(void) {
  max_context_t* context = NULL;
  int32_t n;
  EXPECT_OK(max_context_create(NULL, &context));
  n = context_threads(context);
  max_context_release(context);
  assert_true(n >= 1);
  return n;
}

static void init_fills_defaults_at_current_size(void** state) {
  max_context_options_t o;
  (void)state;
  memset(&o, 0xab, sizeof o);
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  assert_int_equal(o.struct_size, sizeof o);
  assert_null(o.devices);
  assert_int_equal(o.num_devices, 0);
  assert_int_equal(o.num_threads, 0);
  assert_int_equal(o.log_level, -1);
}

static void current_size_is_honoured(void** state) {
  max_context_options_t o;
  max_context_t* context = NULL;
  (void)state;
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.num_threads = 3;
  EXPECT_OK(max_context_create(&o, &context));
  assert_int_equal(context_threads(context), 3);
  max_context_release(context);
}

/* An older program's struct ends before num_threads: whatever lies past struct_size is not
 * the library's to read, and the missing fields take their defaults. */
static void older_size_defaults_the_missing_tail(void** state) {
  max_context_options_t o;
  max_context_t* context = NULL;
  max_log_level_t before = max_log_level();
  (void)state;
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.struct_size = OLD_SIZE;
  o.num_threads = -7; /* past the old struct: would be refused if read */
  o.log_level = 99;   /* likewise */
  EXPECT_OK(max_context_create(&o, &context));
  assert_int_equal(context_threads(context), default_threads());
  assert_int_equal(max_log_level(), before);
  max_context_release(context);
}

static void older_size_keeps_the_fields_it_has(void** state) {
  max_context_options_t o;
  max_context_t* context = NULL;
  max_device_t* cpu = cpu_device();
  max_device_t* devices[1];
  max_device_t* got = NULL;
  size_t n = 0;
  (void)state;
  devices[0] = cpu;
  EXPECT_OK(max_context_options_init(&o, OLD_SIZE));
  o.devices = devices;
  o.num_devices = 1;
  EXPECT_OK(max_context_create(&o, &context));
  EXPECT_OK(max_context_num_devices(context, &n));
  assert_int_equal(n, 1);
  EXPECT_OK(max_context_device(context, 0, &got));
  assert_ptr_equal(got, cpu);
  max_device_release(got);
  max_context_release(context);
  max_device_release(cpu);
}

/* init writes only the fields this library knows: a newer program's fields are its own. */
static void init_leaves_a_newer_tail_alone(void** state) {
  newer_options_t o;
  max_context_t* context = NULL;
  (void)state;
  memset(&o, 0x5a, sizeof o);
  EXPECT_OK(max_context_options_init(&o.known, sizeof o));
  assert_int_equal(o.known.struct_size, sizeof o);
  assert_int_equal(o.future_a, 0x5a5a5a5a5a5a5a5aull);
  assert_int_equal(o.future_b, 0x5a5a5a5a5a5a5a5aull);
  o.known.num_threads = 2;
  EXPECT_OK(max_context_create(&o.known, &context));
  assert_int_equal(context_threads(context), 2);
  max_context_release(context);
}

/* The fields this library does not know are never read, set or not. */
static void larger_struct_tail_is_ignored(void** state) {
  newer_options_t o;
  max_context_t* context = NULL;
  (void)state;
  EXPECT_OK(max_context_options_init(&o.known, sizeof o));
  o.future_a = 7;
  o.future_b = 1;
  o.known.num_threads = 3;
  EXPECT_OK(max_context_create(&o.known, &context));
  assert_int_equal(context_threads(context), 3);
  max_context_release(context);
}

/* A struct_size far past the struct cannot make the library read (or init write) past the
 * fields it knows: min(struct_size, its sizeof) bounds both. */
static void struct_size_past_the_struct_is_not_followed(void** state) {
  max_context_options_t o;
  max_context_t* context = NULL;
  (void)state;
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.num_threads = 2;
  o.struct_size = SIZE_MAX;
  EXPECT_OK(max_context_create(&o, &context));
  assert_int_equal(context_threads(context), 2);
  max_context_release(context);
  EXPECT_OK(max_context_options_init(&o, SIZE_MAX));
  assert_int_equal(o.struct_size, SIZE_MAX);
  assert_int_equal(o.num_threads, 0);
}

static void struct_size_too_small_is_refused(void** state) {
  max_context_options_t o;
  max_context_t* context = SENTINEL_PTR;
  (void)state;
  EXPECT_OK(max_context_options_init(&o, sizeof o));
  o.struct_size = 0;
  EXPECT_INVALID(max_context_create(&o, &context), "struct_size", "_init");
  assert_null(context);
  o.struct_size = sizeof(size_t) - 1;
  context = SENTINEL_PTR;
  EXPECT_INVALID(max_context_create(&o, &context), "struct_size");
  assert_null(context);
}

/* init must not write past the size it is given: a guard byte after an old-size struct. */
static void init_does_not_write_past_the_given_size(void** state) {
  _Alignas(max_context_options_t) unsigned char bytes[sizeof(max_context_options_t) + 16];
  size_t i;
  (void)state;
  memset(bytes, 0xcd, sizeof bytes);
  EXPECT_OK(max_context_options_init((max_context_options_t*)(void*)bytes, OLD_SIZE));
  {
    max_context_options_t o;
    memcpy(&o, bytes, sizeof o);
    assert_int_equal(o.struct_size, OLD_SIZE);
    assert_null(o.devices);
    assert_int_equal(o.num_devices, 0);
  }
  for (i = OLD_SIZE; i < sizeof bytes; ++i)
    if (bytes[i] != 0xcd) fail_msg("max_context_options_init wrote byte %zu past struct_size %zu",
                                   i, (size_t)OLD_SIZE);
}

static void init_with_just_struct_size(void** state) {
  _Alignas(max_context_options_t) unsigned char bytes[sizeof(size_t) + 8];
  size_t size;
  (void)state;
  memset(bytes, 0xcd, sizeof bytes);
  EXPECT_OK(max_context_options_init((max_context_options_t*)(void*)bytes, sizeof(size_t)));
  memcpy(&size, bytes, sizeof size);
  assert_int_equal(size, sizeof(size_t));
  assert_int_equal(bytes[sizeof(size_t)], 0xcd);
}

static void init_refuses_bad_arguments(void** state) {
  max_context_options_t o;
  (void)state;
  memset(&o, 0xee, sizeof o);
  EXPECT_INVALID(max_context_options_init(&o, sizeof(size_t) - 1), "struct_size");
  EXPECT_INVALID(max_context_options_init(&o, 0), "struct_size");
  assert_int_equal(o.num_threads, (int32_t)0xeeeeeeee); /* nothing written on failure */
  EXPECT_INVALID(max_context_options_init(NULL, sizeof o), "options");
}

static void null_options_mean_defaults(void** state) {
  max_context_t* context = NULL;
  size_t n = 0;
  (void)state;
  EXPECT_OK(max_context_create(NULL, &context));
  EXPECT_OK(max_context_num_devices(context, &n));
  assert_int_equal(n, 1);
  assert_int_equal(context_threads(context), default_threads());
  max_context_release(context);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(init_fills_defaults_at_current_size),
      cmocka_unit_test(current_size_is_honoured),
      cmocka_unit_test(older_size_defaults_the_missing_tail),
      cmocka_unit_test(older_size_keeps_the_fields_it_has),
      cmocka_unit_test(init_leaves_a_newer_tail_alone),
      cmocka_unit_test(larger_struct_tail_is_ignored),
      cmocka_unit_test(struct_size_past_the_struct_is_not_followed),
      cmocka_unit_test(struct_size_too_small_is_refused),
      cmocka_unit_test(init_does_not_write_past_the_given_size),
      cmocka_unit_test(init_with_just_struct_size),
      cmocka_unit_test(init_refuses_bad_arguments),
      cmocka_unit_test(null_options_mean_defaults),
  };
  return cmocka_run_group_tests_name("options structs", tests, NULL, NULL);
}
