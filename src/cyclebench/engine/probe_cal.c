/* probe_cal.c — bodies of known cost built with -finstrument-functions into the probe's own
 * library (build/probe.py), so the probe's cost is read from calls the same probe makes in the
 * same process as the program it profiles (docs/method.md §10; Evans 2008,
 * docs/references.md#malloc-profiling-freebsd-2008: "profiling has subtracted its own
 * overheads"):
 *  - an empty body: the probe's whole cost inside a call's span;
 *  - a 300-add chain: the same less what out-of-order overlap hides (its plain twin in probe.c
 *    gives the chain's own time);
 *  - a caller of CBP_FAN instrumented leaves against one of CBP_FAN plain ones: what each
 *    child's probe costs the caller; a caller of fans: the same for children that make calls. */
#include "probe.h"

__attribute__((noinline)) void cbp_cal_empty(void) { __asm__ volatile(""); }

__attribute__((noinline)) uint64_t cbp_cal_chain(uint64_t x, uint64_t y) {
    __asm__ volatile(CBP_CHAIN(300) : "+r"(x) : "r"(y));
    return x;
}

__attribute__((noinline)) void cbp_cal_fan(void) {
    for (int i = 0; i < CBP_FAN; i++) cbp_cal_empty();
}

__attribute__((noinline)) void cbp_cal_fan_plain(void) {
    for (int i = 0; i < CBP_FAN; i++) cbp_plain();
}

__attribute__((noinline)) void cbp_cal_top(void) {
    for (int i = 0; i < CBP_FAN; i++) cbp_cal_fan();
}
