/* exit(0) in the body: the runner ends without a result. */
#include <stdlib.h>
#include <cyclebench.h>

CB_BENCH(ex, exit0) {
    if (cb_iters(s)) exit(0);
}
