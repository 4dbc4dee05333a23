/* timer/ — the cost of reading the clock (Evans 2008,
 * docs/references.md#malloc-profiling-freebsd-2008: "the cost of rdtsc itself differs between
 * CPUs", and profiling overhead must be known to be removed). One operation is one read; the
 * value feeds cb_do_not_optimize so the read cannot be dropped (the asm reads are volatile as
 * well, so none is merged with its neighbour). Back-to-back reads measure throughput, which is
 * what a timed region pays per read. */
#include <time.h>

#include <cyclebench.h>

#if defined(__x86_64__)
/* Evans 2008: plain rdtsc, unfenced — it can execute out of order with its neighbours, so it
 * is the cheapest read and the least precise one. */
CB_BENCH(timer, rdtsc) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        cb_do_not_optimize(((uint64_t)hi << 32) | lo);
    }
}

/* Evans 2008: lfence; rdtsc; lfence — the engine's start read (timer.h): the fences are what
 * make it precise, and most of what it costs. */
CB_BENCH(timer, rdtsc_lfence) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint32_t lo, hi;
        __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
        cb_do_not_optimize(((uint64_t)hi << 32) | lo);
    }
}

/* Evans 2008: rdtscp; lfence — the engine's stop read (timer.h). rdtscp is missing on some
 * old VMs, hence the gate. */
CB_BENCH(timer, rdtscp) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint32_t lo, hi, aux;
        __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
        cb_do_not_optimize(((uint64_t)hi << 32) | lo);
    }
}
CB_REQUIRE(timer, rdtscp, "rdtscp")
#endif

#if defined(__aarch64__)
/* Evans 2008 on arm64: isb; mrs cntvct_el0 — the isb keeps the counter read in program order
 * (an mrs of the counter alone may be read early, like an unfenced rdtsc). */
CB_BENCH(timer, cntvct) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t v;
        __asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
        cb_do_not_optimize(v);
    }
}

/* Evans 2008: isb; mrs cntvct_el0; isb — exactly the engine's start and stop read on arm64
 * (timer.h); the second isb keeps the batch from starting before the read. */
CB_BENCH(timer, cntvct_isb) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        uint64_t v;
        __asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
        cb_do_not_optimize(v);
    }
}
#endif

/* Evans 2008: CLOCK_MONOTONIC — served by the vDSO without entering the kernel (when the
 * kernel's clocksource allows it): what most portable code times with. */
CB_BENCH(timer, clock_gettime) {
    struct timespec ts;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        cb_do_not_optimize(ts.tv_nsec);
    }
}

/* Evans 2008: CLOCK_MONOTONIC_RAW (not slewed by NTP) — the engine's clock where there is no
 * cycle counter, and its wall clock for budgets (timer.h). Also a vDSO call on recent
 * kernels; older kernels (< 5.3 on x86) make it a real system call. */
CB_BENCH(timer, clock_gettime_raw) {
    struct timespec ts;
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
        cb_do_not_optimize(ts.tv_nsec);
    }
}
