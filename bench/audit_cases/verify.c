/* audit: CB_VERIFY fails. */
#include <cyclebench.h>

CB_BENCH(vf, wrong) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_clobber();
}
CB_VERIFY(vf, wrong) { return 0; }
