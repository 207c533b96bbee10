/* Mutant (d) of the symbol checker's self-test: linked without the version script and with
 * one default-visibility function outside the max_ namespace. The checker must report the
 * foreign symbol and the unversioned max_* ones. */
__attribute__((visibility("default"))) int maxc_leaked_internal_helper(void);

int maxc_leaked_internal_helper(void) { return 42; }
