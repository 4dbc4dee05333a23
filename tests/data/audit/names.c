/* benchmark names with a space, a command substitution, UTF-8 and a dollar sign,
 * registered by hand (the CB_BENCH macros only take identifiers). `pwned4` is relative:
 * tests/audit checks it did not appear in the working directory. */
#include <cyclebench.h>

static void body(cb_state *s) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

static const cb_bench weird[] = {
    {"weird", "sp ace", body, NULL, 0, __FILE__, __LINE__},
    {"weird", "$(touch pwned4)", body, NULL, 0, __FILE__, __LINE__},
    {"weird", "caf\xc3\xa9", body, NULL, 0, __FILE__, __LINE__},
    {"weird", "dol$lar", body, NULL, 0, __FILE__, __LINE__},
};

__attribute__((constructor)) static void reg(void) {
    for (unsigned i = 0; i < sizeof weird / sizeof weird[0]; i++) cb_register_(&weird[i]);
}
