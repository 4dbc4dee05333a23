/* a realistic crash whose last stderr line holds brackets. */
#include <stdio.h>
#include <stdlib.h>
#include <cyclebench.h>

CB_BENCH(mk, msr) {
    if (cb_iters(s)) {
        fprintf(stderr, "cannot open MSR device [/dev/cpu/0/msr-nope]\n");
        abort();
    }
}
