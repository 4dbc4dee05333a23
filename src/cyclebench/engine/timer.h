/* timer.h — the engine's clock: read at the start and at the end of a timed batch.
 *
 * x86-64 (Intel "How to Benchmark Code Execution Times", Paoloni 2010, with lfence in
 * place of cpuid as both vendors now document lfence as dispatch-serialising):
 *   start: lfence; rdtsc; lfence
 *     - the first lfence waits until every earlier instruction (set-up, the previous
 *       batch) has completed, so it is not counted in this batch;
 *     - the second keeps the batch's first instructions from starting before the read.
 *   stop:  rdtscp; lfence
 *     - rdtscp waits until every earlier instruction has executed (loads globally
 *       visible), so the whole batch is inside the interval;
 *     - the lfence keeps later instructions from starting before the read.
 *   Unit: TSC ticks = "ref-cycles" (constant rate, independent of the core clock).
 * aarch64: isb; mrs cntvct_el0; isb — isb is the context-synchronising barrier that
 *   keeps the counter read in program order. Unit: generic-timer ticks (cntfrq_el0 Hz).
 * Elsewhere: clock_gettime(CLOCK_MONOTONIC_RAW) in ns (unslewed by NTP).
 */
#ifndef CB_TIMER_H
#define CB_TIMER_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__)
#define CB_TIMER_NAME "rdtsc-lfence/rdtscp"
#define CB_TIMER_UNIT "ref-cycles"

static inline __attribute__((always_inline)) uint64_t cb_timer_start(void) {
    uint32_t lo, hi;
    __asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

static inline __attribute__((always_inline)) uint64_t cb_timer_stop(void) {
    uint32_t lo, hi, aux;
    __asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Used where rdtscp is missing (some old VMs hide it): a fenced rdtsc on both sides. */
static inline __attribute__((always_inline)) uint64_t cb_timer_stop_norscp(void) {
    return cb_timer_start();
}

#elif defined(__aarch64__)
#define CB_TIMER_NAME "cntvct_el0"
#define CB_TIMER_UNIT "ticks"

static inline __attribute__((always_inline)) uint64_t cb_timer_start(void) {
    uint64_t v;
    __asm__ volatile("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(v) : : "memory");
    return v;
}
static inline __attribute__((always_inline)) uint64_t cb_timer_stop(void) { return cb_timer_start(); }
static inline __attribute__((always_inline)) uint64_t cb_timer_stop_norscp(void) { return cb_timer_start(); }
static inline uint64_t cb_timer_hz(void) {
    uint64_t f;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
    return f;
}

#else
#define CB_TIMER_NAME "clock_gettime(CLOCK_MONOTONIC_RAW)"
#define CB_TIMER_UNIT "ns"

static inline uint64_t cb_timer_start(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline uint64_t cb_timer_stop(void) { return cb_timer_start(); }
static inline uint64_t cb_timer_stop_norscp(void) { return cb_timer_start(); }
#endif

/* Wall-clock ns for budgeting only (never for a reported time). */
static inline uint64_t cb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif /* CB_TIMER_H */
