/* one variant does not compile (-DBROKEN), one crashes (-DCRASH). */
#include <cyclebench.h>

#ifdef BROKEN
this does not compile;
#endif

CB_BENCH(vc, work) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        x += i;
        cb_opaque(x);
    }
#ifdef CRASH
    volatile int *volatile p = 0;
    if (cb_iters(s)) *p = (int)x;
#endif
}
