/* in `cyclebench scale`, task 1 of sc/crash segfaults once it has run 0.3 s. */
#include <time.h>
#include <cyclebench.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

CB_BENCH(sc, fine) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        x += i;
        cb_opaque(x);
    }
}

CB_SETUP(sc, crash) {
    double *t0 = cb_buffer(s, sizeof *t0, 64, 0);
    if (t0) *t0 = now_s();
    cb_set_user(s, t0);
}
CB_BENCH(sc, crash) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        x += i;
        cb_opaque(x);
    }
    if (cb_task(s) == 1 && now_s() - *(double *)cb_user(s) > 0.3) {
        volatile int *volatile p = 0;
        *p = 1;
    }
}
