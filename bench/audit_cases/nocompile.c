/* audit: does not compile (a syntax error on purpose). */
#include <cyclebench.h>

CB_BENCH(nc, broken) {
    for (uint64_t i = 0; i < cb_iters(s); i++) this is not C;
}
