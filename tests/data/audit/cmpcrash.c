/* `compare cc/good cc/bad`: B segfaults, A and A2 are fine (the crash was once blamed on A). */
#include <cyclebench.h>

CB_BENCH(cc, good) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_BENCH(cc, good2) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_BENCH(cc, bad) {
    volatile int *volatile p = 0;
    if (cb_iters(s)) *p = 1;
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
