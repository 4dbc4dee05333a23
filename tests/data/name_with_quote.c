/* A benchmark whose name contains a double quote, next to a plain one. */
#include <cyclebench.h>

static void body(cb_state *s) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

static const cb_bench quoted = {"weird", "qu\"ote", body, NULL, 0, __FILE__, __LINE__};

__attribute__((constructor)) static void reg(void) { cb_register_(&quoted); }

CB_BENCH(weird, plain) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
