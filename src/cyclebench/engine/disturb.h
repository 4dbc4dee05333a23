/* disturb.h — was a sample disturbed? Context switches and CPU migrations counted around
 * each timed batch (software perf events: they work without a PMU, in VMs too).
 * exclude_kernel is not set: a context switch only ever happens in the kernel, and a peer
 * tool that excludes the kernel counts none. Where perf_event_open is refused
 * (perf_event_paranoid, seccomp), getrusage(RUSAGE_THREAD) voluntary + involuntary
 * switches stand in (no migrations then). */
#ifndef CB_DISTURB_H
#define CB_DISTURB_H

#include <stdint.h>

typedef struct cb_disturb {
    int fd;             /* group leader (context-switches), -1 when not open */
    int source;         /* 0 none, 1 perf, 2 getrusage */
    uint64_t cs, mig;   /* last read */
} cb_disturb;

void cb_disturb_open(cb_disturb *d);

/* The PMU's core-cycles event (PERF_COUNT_HW_CPU_CYCLES, user + kernel) read around each
 * batch, to cross-check cycles~ where a PMU exists. On a VM without a virtual PMU
 * perf_event_open fails with ENOENT: fd stays -1 and `error` says why. */
typedef struct cb_pmu {
    int fd;
    int error; /* errno of perf_event_open, 0 when open */
} cb_pmu;

void cb_pmu_open(cb_pmu *p);
/* Current count, or 0 when not open. */
uint64_t cb_pmu_read(const cb_pmu *p);
/* Reads the counters; returns 1 when anything happened since the previous read. */
int cb_disturb_changed(cb_disturb *d);
const char *cb_disturb_source(const cb_disturb *d);

#endif
