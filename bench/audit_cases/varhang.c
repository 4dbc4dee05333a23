/* audit (D14): one variant (-DHANG) never returns. */
#include <cyclebench.h>

CB_BENCH(vh, work) {
#ifdef HANG
    for (;;) cb_clobber();
#endif
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
