/* variants where one build hangs: it is not invoked again, and the others compare. */
#include <cyclebench.h>

CB_BENCH(v, work) {
#ifdef HANG
    for (;;) cb_clobber();
#endif
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
