/* 1 ms asleep per op: harmless under SCHED_FIFO (which --fifo once never applied). */
#include <time.h>
#include <cyclebench.h>

CB_BENCH(sl, ms) {
    struct timespec ts = {0, 1000000};
    for (uint64_t i = 0; i < cb_iters(s); i++) nanosleep(&ts, NULL);
}
