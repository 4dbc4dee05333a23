/* Benchmarks that would run past --max-time (docs/method.md §8): each op takes a time of its
 * own choosing, by spinning on CLOCK_MONOTONIC (nanosleep's timer slack would blur it). */
#include <time.h>

#include <cyclebench.h>

static void spin_ns(uint64_t ns) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (uint64_t)(b.tv_nsec - a.tv_nsec) < ns);
}

/* 10 ms an op: 3 rounds of the 8-size ladder (36 ops each) take 1.1 s — the old floor of
 * 3 rounds ran that whatever --max-time said. */
CB_BENCH(overrun, slow_op) {
    for (uint64_t i = 0; i < cb_iters(s); i++) spin_ns(10 * 1000 * 1000);
}

/* 2 µs an op for its first 4000 ops (the sizing sees these), then 20 µs: rounds planned
 * from the sizing take 10× longer than planned (copy/nt_store does this by 1.1–1.5×). */
CB_BENCH(overrun, slows_down) {
    static uint64_t done;
    for (uint64_t i = 0; i < cb_iters(s); i++) spin_ns(done++ < 4000 ? 2000 : 20000);
}
