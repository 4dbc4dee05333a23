/* A benchmark that crashes in the scaling mode: task 1 writes through a NULL pointer once it
 * has run for CRASH_AFTER_S seconds (after a few intervals); every other task is fine. */
#include <stdint.h>
#include <time.h>

#include <cyclebench.h>

#ifndef CRASH_AFTER_S
#define CRASH_AFTER_S 0.45
#endif

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

CB_SETUP(scalecrash, late_segv) {
    double *t0 = cb_buffer(s, sizeof *t0, 64, 0);
    if (t0) *t0 = now_s();
    cb_set_user(s, t0);
}

CB_BENCH(scalecrash, late_segv) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        x += i;
        cb_opaque(x);
    }
    if (cb_task(s) == 1 && now_s() - *(double *)cb_user(s) > CRASH_AFTER_S) {
        volatile int *volatile p = 0; /* opaque: a real store to address 0, SIGSEGV */
        *p = 1;
    }
}
