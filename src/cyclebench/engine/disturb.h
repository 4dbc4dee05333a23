/* disturb.h — was a sample disturbed? Only what takes the benchmark off its CPU against its
 * will counts, read around each timed batch:
 *   - preemption (bit 1): the measuring thread was kept off its CPU while something other
 *     than the benchmark ran — an involuntary context switch (getrusage(RUSAGE_THREAD)
 *     ru_nivcsw), or a wake-up kept waiting. A benchmark that wakes a thread or process of
 *     its own on the same CPU (a pipe ping-pong) is preempted by it at nearly every
 *     wake-up, by design; so the time the thread waited on the run queue (run_delay,
 *     /proc/thread-self/schedstat) is compared with the CPU time its other tasks used
 *     meanwhile (its other threads: CLOCK_PROCESS_CPUTIME_ID less CLOCK_THREAD_CPUTIME_ID;
 *     the processes it forked: /proc/thread-self/children and their schedstat, the reaped
 *     ones by RUSAGE_CHILDREN): it counts when the wait was longer. Without schedstat every
 *     involuntary switch counts.
 *   - a CPU migration (bit 2): another CPU after the batch than before (sched_getcpu; a
 *     move there and back within one batch is missed — the runner is pinned anyway).
 * Voluntary switches (ru_nvcsw) never count: a benchmark that blocks by design (a pipe,
 * a futex, mkdir, nanosleep) sleeps in every batch and still gets its number.
 * No perf event is opened on the benchmark's tasks: one costs every context switch of the
 * task it is attached to (+0.3 to 0.7 µs a pipe round trip measured on a KVM guest). */
#ifndef CB_DISTURB_H
#define CB_DISTURB_H

#include <stdint.h>

/* What cb_disturb_changed returns, or-ed: the flag stored per sample (0: undisturbed). */
#define CB_DISTURB_PREEMPTED 1 /* kept off its CPU while something else ran */
#define CB_DISTURB_MIGRATED 2  /* on another CPU after the batch */
#define CB_DISTURB_INTERRUPTED 4 /* an interrupt was taken on its CPU during the timed batch (cb_irq):
                                  * not a disturbance of the result, a batch the estimate may leave out */

typedef struct cb_disturb_reading {
    int64_t nivcsw, nvcsw; /* involuntary and voluntary switches */
    int64_t tasks, self;   /* CPU ns of the process (all its threads), of the measuring thread */
    int64_t children;      /* CPU ns of the processes it forked */
    int64_t delay;         /* ns the thread waited on a run queue, -1 unknown */
    int cpu;               /* the CPU it was on */
} cb_disturb_reading;

typedef struct cb_disturb {
    int ok;                /* 0: nothing can be read, nothing is detected */
    int sched_fd;          /* /proc/thread-self/schedstat, -1 when absent */
    int children_fd;       /* /proc/thread-self/children, -1 when absent */
    int read;              /* last holds a reading */
    cb_disturb_reading last;
} cb_disturb;

/* Opens the sources; call it in the measuring thread (its schedstat and children are read). */
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
/* Interrupts taken on the measuring CPU (docs/method.md §4): a device's completions (an fsync'd
 * writer's disk: ~2,600 a second on the CPU its queue is bound to, a managed IRQ the guest cannot
 * move) or the timer tick run inside a batch and lengthen it without a context switch, so nothing
 * above sees them, and they biased cycles~ of add chains by +0.3% beside such a writer (AMD EPYC
 * guest). Counted by the kernel's tracepoints (irq:irq_handler_entry and x86's
 * irq_vectors:*_entry), one event group on the pinned CPU (pid -1, so no cost at the benchmark's
 * context switches, unlike a per-task event: see the note above), read before and after each
 * timed batch. Needs tracefs (/sys/kernel/tracing or /sys/kernel/debug/tracing) and the right to
 * count a whole CPU (root, CAP_PERFMON or perf_event_paranoid ≤ 0); else fd stays -1 and
 * `why` says what was missing. */
#define CB_IRQ_EVENTS 8
typedef struct cb_irq {
    int fd;             /* group leader, -1 when not counting */
    int nevents;        /* events in the group */
    int cpu;            /* the CPU counted */
    char why[96];       /* why not, when fd is -1 */
} cb_irq;

/* Opens the counters on `cpu` (the one the runner is pinned to; -1: not pinned, nothing counted). */
void cb_irq_open(cb_irq *q, int cpu);
/* Interrupts on the CPU so far (all the group's events summed), or 0 when not counting. */
uint64_t cb_irq_read(const cb_irq *q);
void cb_irq_close(cb_irq *q);

/* Reads the counters; returns what happened since the previous read (CB_DISTURB_*, 0: nothing). */
int cb_disturb_changed(cb_disturb *d);
/* What detected it: "nivcsw+run_delay" (schedstat), "nivcsw" (every involuntary switch), or "none". */
const char *cb_disturb_source(const cb_disturb *d);

#endif
