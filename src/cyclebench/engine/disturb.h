/* disturb.h — was a sample disturbed? Only what takes the benchmark off its CPU against its
 * will counts, read around each timed batch:
 *   - preemption: an involuntary context switch of the measuring thread
 *     (getrusage(RUSAGE_THREAD) ru_nivcsw) during which something other than the benchmark
 *     ran. A benchmark that wakes a thread or process of its own on the same CPU (a pipe
 *     ping-pong) is preempted by it at nearly every wake-up, by design; so the time the
 *     thread waited on the run queue (run_delay, /proc/thread-self/schedstat) is compared
 *     with the CPU time the benchmark's other tasks used meanwhile (the task-clock software
 *     event inherited by every thread and process it starts, less the thread's own): a
 *     preemption counts when the wait was longer. Without schedstat every involuntary
 *     switch counts.
 *   - a CPU migration (the cpu-migrations software event).
 * Voluntary switches (ru_nvcsw) never count: a benchmark that blocks by design (a pipe,
 * a futex, mkdir, nanosleep) sleeps in every batch and still gets its number.
 * The software events need no PMU (VMs too); exclude_kernel is not set, since a migration
 * only ever happens in the kernel and a peer tool that excludes the kernel counts none.
 * Where perf_event_open is refused (perf_event_paranoid, seccomp), CLOCK_PROCESS_CPUTIME_ID
 * stands in for the tree's CPU time (threads, not forked processes) and sched_getcpu()
 * before and after a batch for migrations (one there and back is then missed). */
#ifndef CB_DISTURB_H
#define CB_DISTURB_H

#include <stdint.h>

/* What cb_disturb_changed returns, or-ed: the flag stored per sample (0: undisturbed). */
#define CB_DISTURB_PREEMPTED 1 /* an involuntary context switch */
#define CB_DISTURB_MIGRATED 2  /* a CPU migration */

typedef struct cb_disturb_reading {
    int64_t nivcsw, nvcsw, mig; /* involuntary and voluntary switches, migrations */
    int64_t tree, self;  /* CPU ns of the benchmark's tasks (all), of the measuring thread */
    int64_t delay;       /* ns the thread waited on a run queue, -1 unknown */
    int cpu;             /* without perf: the CPU it was on */
} cb_disturb_reading;

typedef struct cb_disturb {
    int ok;              /* 0: nothing can be read, nothing is detected */
    int mig_fd, tree_fd; /* cpu-migrations, task-clock (inherited); -1 when refused */
    int sched_fd;        /* /proc/thread-self/schedstat, -1 when absent */
    int read;            /* last holds a reading */
    cb_disturb_reading last;
} cb_disturb;

/* Opens the sources; call it in the measuring thread before the benchmark starts any task. */
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
/* Reads the counters; returns what happened since the previous read (CB_DISTURB_*, 0: nothing). */
int cb_disturb_changed(cb_disturb *d);
/* What detected it: "nivcsw", "+run_delay" (schedstat), "+perf" (software events); or "none". */
const char *cb_disturb_source(const cb_disturb *d);

#endif
