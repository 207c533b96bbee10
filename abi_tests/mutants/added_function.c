/* Mutant (c) of the ABI checkers' self-test: the real library plus one new exported max_*
 * function. abidiff must see a pure addition (the baseline check passes); the symbol list
 * check must report it as not in the committed list (additions are recorded on purpose). */
#include <stdint.h>

__attribute__((visibility("default"))) int32_t max_abi_selftest_added_function(int32_t x);

int32_t max_abi_selftest_added_function(int32_t x) { return x + 1; }
