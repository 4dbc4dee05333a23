/* a well-behaved benchmark. */
#include <cyclebench.h>

CB_BENCH(ok, add) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        x += i;
        cb_opaque(x);
    }
    cb_do_not_optimize(x);
}
