/* spin/cpu_5ms: one operation spins for 5 ms of the thread's own CPU time, whatever else
 * shares the CPU. The engine then sizes every batch at 1 operation per ladder step
 * (5–40 ms of CPU): longer than any time slice, so a busy program on the same CPU takes it
 * in every batch (tests/commands/test_disturbed.py). */
#include <time.h>

#include <cyclebench.h>

static uint64_t cpu_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

CB_BENCH(spin, cpu_5ms) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t end = cpu_ns() + 5000000;
        while (cpu_ns() < end) {
        }
    }
}
