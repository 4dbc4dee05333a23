/* timer/ — the cost of reading the clock (seed 004: "the cost of rdtsc itself differs
 * between CPUs", and profiling overhead must be known to be removed). One operation is one
 * read; the value feeds cb_do_not_optimize so the read cannot be dropped. Back-to-back
 * reads measure throughput, which is what a timed region pays per read. */
#include <time.h>

#include <cyclebench.h>

#if defined(__x86_64__)
CB_BENCH(timer, rdtsc) { /* unfenced: can execute out of order with its neighbours */
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        cb_do_not_optimize(lo);
    }
}

CB_BENCH(timer, rdtsc_lfence) { /* lfence; rdtsc; lfence — the engine's start read */
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint32_t lo, hi;
        __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
        cb_do_not_optimize(lo);
    }
}

CB_BENCH(timer, rdtscp) { /* rdtscp; lfence — the engine's stop read */
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint32_t lo, hi, aux;
        __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
        cb_do_not_optimize(lo);
    }
}
CB_REQUIRE(timer, rdtscp, "rdtscp")
#endif

#if defined(__aarch64__)
CB_BENCH(timer, cntvct) { /* isb; mrs cntvct_el0 — the engine's read on arm64 */
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t v;
        __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
        cb_do_not_optimize(v);
    }
}
#endif

CB_BENCH(timer, clock_gettime) { /* CLOCK_MONOTONIC through the vDSO: what most code uses */
    struct timespec ts;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        cb_do_not_optimize(ts.tv_nsec);
    }
}

CB_BENCH(timer, clock_gettime_raw) { /* CLOCK_MONOTONIC_RAW: the engine's fallback clock */
    struct timespec ts;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        cb_do_not_optimize(ts.tv_nsec);
    }
}
