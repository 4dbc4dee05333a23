/* a body that never returns (spins on the CPU it is pinned to). */
#include <cyclebench.h>

CB_BENCH(hang, forever) {
    for (;;) cb_clobber();
}
