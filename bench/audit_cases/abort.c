/* audit: abort() in the body. */
#include <stdlib.h>
#include <cyclebench.h>

CB_BENCH(ab, abort) {
    if (cb_iters(s)) abort();
}
