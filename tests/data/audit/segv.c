/* a body that segfaults, next to one that is fine. */
#include <cyclebench.h>

CB_BENCH(crash, segv) {
    volatile int *volatile p = 0;
    if (cb_iters(s)) *p = 1;
}

CB_BENCH(crash, fine) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
