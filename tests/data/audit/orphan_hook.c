/* a hook for a benchmark that does not exist (a typo). */
#include <cyclebench.h>

CB_BENCH(oh, real) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_SETUP(oh, typo) { cb_set_user(s, 0); }
