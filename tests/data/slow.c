/* Slow-ish benchmarks (each takes ~0.3 s to measure) for the Ctrl-C test. */
#include <time.h>
#include <cyclebench.h>

CB_BENCH_PARAMS(slow, sleep_us, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16) {
    struct timespec ts = {0, 1000 * cb_param(s)};
    for (uint64_t i = 0; i < cb_iters(s); i++) nanosleep(&ts, NULL);
}
