/* compare with a benchmark that crashes after a few batches: it is blamed (not its
 * neighbours), the others are compared without it. */
#include <cyclebench.h>

CB_BENCH(cc, good) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

CB_BENCH(cc, good2) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}

static int calls;
CB_BENCH(cc, bad) {
    if (++calls > 3) {
        volatile int *p = 0;
        *p = 1;
    }
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
