/* a constructor that segfaults (before main, so `runner --list` dies). */
#include <cyclebench.h>

__attribute__((constructor)) static void boom(void) {
    volatile int *volatile p = 0;
    *p = 1;
}

CB_BENCH(cc, never) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
