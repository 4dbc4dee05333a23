/* profile/ — the cost of the profiler's probe on this machine (Evans 2008,
 * docs/references.md#malloc-profiling-freebsd-2008: "profiling has subtracted its own
 * overheads"; "the cost of rdtsc itself" differs between CPUs, so it is measured here, never
 * assumed). Built with -pg and run under `uftrace record`, which turns every mcount call into
 * an entry and an exit record. `cyclebench profile` reads the trace:
 *  - inside a call's own span, the probe costs what an empty instrumented function's recorded
 *    duration shows (cb_probe_empty), and less around a latency-bound body, whose dependent
 *    chain the probe's instructions overlap out of order: cb_probe_chain's recorded duration
 *    less the chain's own time (plain_chain, uninstrumented, timed by the engine);
 *  - in the caller's span, each child call's probe costs the difference between a parent that
 *    calls CB_PROBE_FAN instrumented empty functions (self time) and one that calls as many
 *    uninstrumented ones (cb_probe_fan vs cb_probe_fan_plain, called alternately); a child
 *    that makes calls of its own costs its caller less (132 cycles~ against 152 here): the
 *    self of cb_probe_top, whose CB_PROBE_FAN children are fans, against cb_probe_fan's.
 * plain_call (an uninstrumented call in a loop) also carries the add chain that calibrates
 * cycles~ around the profiled program. */
#include <cyclebench.h>

#define CB_PROBE_FAN 10

__attribute__((noinline)) void cb_probe_empty(void) { __asm__ volatile(""); }
__attribute__((noinline, no_instrument_function)) void cb_probe_plain(void) { __asm__ volatile(""); }

__attribute__((noinline)) void cb_probe_fan(void) {
    for (int i = 0; i < CB_PROBE_FAN; i++) cb_probe_empty();
}
__attribute__((noinline)) void cb_probe_fan_plain(void) {
    for (int i = 0; i < CB_PROBE_FAN; i++) cb_probe_plain();
}

__attribute__((noinline)) void cb_probe_top(void) {
    for (int i = 0; i < CB_PROBE_FAN; i++) cb_probe_fan();
}

/* reg-reg adds: a dependent chain the core cannot fold (300 cycles on any x86 core) */
#define CB_PROBE_CHAIN ".rept 300\n\taddq %1, %0\n.endr"
__attribute__((noinline)) uint64_t cb_probe_chain(uint64_t x, uint64_t y) {
    __asm__ volatile(CB_PROBE_CHAIN : "+r"(x) : "r"(y));
    return x;
}
__attribute__((noinline, no_instrument_function)) uint64_t cb_probe_chain_plain(uint64_t x, uint64_t y) {
    __asm__ volatile(CB_PROBE_CHAIN : "+r"(x) : "r"(y));
    return x;
}

CB_BENCH(profile, plain_call) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_probe_plain();
}

CB_BENCH(profile, probe_fan) {
    for (uint64_t i = 0; i < cb_iters(s); i++) {
        cb_probe_fan();
        cb_probe_fan_plain();
    }
}

CB_BENCH(profile, probe_tree) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_probe_top();
}

CB_BENCH(profile, probe_chain) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = cb_probe_chain(x, 1);
    cb_do_not_optimize(x);
}

CB_BENCH(profile, plain_chain) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < cb_iters(s); i++) x = cb_probe_chain_plain(x, 1);
    cb_do_not_optimize(x);
}
