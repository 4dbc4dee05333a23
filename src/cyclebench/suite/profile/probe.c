/* profile/ — the cost of the profiler's probe on this machine (seed 004: "profiling has
 * subtracted its own overheads"; "the cost of rdtsc itself" differs between CPUs, so it is
 * measured here, never assumed). Built with -pg and run under `uftrace record`, which turns
 * every mcount call into an entry and an exit record: probe_call calls an instrumented empty
 * function, plain_call the same function without instrumentation (no_instrument_function),
 * so per op their difference is the probe's whole cost per call, timed as the suite times
 * anything (slope over batch sizes, cycles~ from the add chains). `cyclebench profile` also
 * reads the empty function's recorded durations from the trace: the part of the probe that
 * lands inside a call's own span. */
#include <cyclebench.h>

__attribute__((noinline)) void cb_probe_empty(void) { __asm__ volatile(""); }
__attribute__((noinline, no_instrument_function)) void cb_probe_plain(void) { __asm__ volatile(""); }

CB_BENCH(profile, probe_call) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_probe_empty();
}

CB_BENCH(profile, plain_call) {
    for (uint64_t i = 0; i < cb_iters(s); i++) cb_probe_plain();
}
