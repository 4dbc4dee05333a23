/* disturb.c — see disturb.h. */
#define _GNU_SOURCE
#include "disturb.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* A switch between the benchmark's own tasks: 0.3 µs (threads) to 0.75 µs (processes) of
 * run-queue wait that no task's clock counts, measured on a KVM guest; 5 µs allowed. */
enum { SWITCH_NS = 5000 };

static int64_t clock_ns(clockid_t c) {
    struct timespec t;
    return clock_gettime(c, &t) == 0 ? (int64_t)t.tv_sec * 1000000000 + t.tv_nsec : 0;
}

static int64_t tv_ns(struct timeval tv) { return (int64_t)tv.tv_sec * 1000000000 + (int64_t)tv.tv_usec * 1000; }

/* The first number of a /proc schedstat file (ns on the CPU), or its second (ns waited on a
 * run queue); -1 when it cannot be read. */
static int64_t schedstat(int fd, int field) {
    char buf[96];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0) return -1;
    buf[n] = 0;
    char *p = buf;
    int64_t v = strtoll(p, &p, 10);
    return field == 0 ? v : strtoll(p, NULL, 10);
}

/* CPU ns of the processes the measuring thread forked: those alive (or not yet reaped) by
 * their schedstat, the reaped ones by RUSAGE_CHILDREN. The list is read first: a child
 * reaped in between counts twice, never not at all. */
static int64_t children_ns(int fd) {
    int64_t sum = 0;
    char buf[1024];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n > 0) {
        buf[n] = 0;
        for (char *p = buf, *end;; p = end) {
            long pid = strtol(p, &end, 10);
            if (end == p) break;
            char path[40];
            snprintf(path, sizeof path, "/proc/%ld/schedstat", pid);
            int f = open(path, O_RDONLY | O_CLOEXEC);
            int64_t v = schedstat(f, 0);
            if (f >= 0) close(f);
            if (v > 0) sum += v;
        }
    }
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) == 0) sum += tv_ns(ru.ru_utime) + tv_ns(ru.ru_stime);
    return sum;
}

void cb_disturb_open(cb_disturb *d) {
    memset(d, 0, sizeof *d);
    d->sched_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    d->children_fd = open("/proc/thread-self/children", O_RDONLY | O_CLOEXEC);
    struct rusage ru;
    d->ok = getrusage(RUSAGE_THREAD, &ru) == 0; /* never fails on Linux; else nothing is detected */
    cb_disturb_changed(d);
}

int cb_disturb_changed(cb_disturb *d) {
    if (!d->ok) return 0;
    cb_disturb_reading r = {0};
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        r.nivcsw = ru.ru_nivcsw;
        r.nvcsw = ru.ru_nvcsw;
    } else {
        r.nivcsw = d->last.nivcsw;
        r.nvcsw = d->last.nvcsw;
    }
    /* the process's CPU time and the thread's in the same order every time: their
     * difference over an interval is then the other threads' alone */
    r.tasks = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    r.self = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    r.delay = schedstat(d->sched_fd, 1);
    r.children = children_ns(d->children_fd);
    r.cpu = sched_getcpu();
    int what = 0;
    if (d->read && (r.delay < 0 || d->last.delay < 0)) {
        if (r.nivcsw != d->last.nivcsw) what |= CB_DISTURB_PREEMPTED; /* no schedstat: every preemption */
    } else if (d->read) {
        /* Kept off its CPU: preempted, or woken and kept waiting. By another program, or by a
         * thread or process of the benchmark's own (a ping-pong on one CPU preempts it at
         * nearly every wake-up, by design)? The time the thread waited on the run queue,
         * less the CPU time its other tasks used meanwhile, is time something else ran —
         * less the switches themselves (a wait starts before the next task's clock does):
         * up to SWITCH_NS per switch, for an involuntary one only as much as its own tasks ran. */
        int64_t wait = r.delay - d->last.delay, niv = r.nivcsw - d->last.nivcsw, nv = r.nvcsw - d->last.nvcsw;
        int64_t others = (r.tasks - d->last.tasks) - (r.self - d->last.self) + (r.children - d->last.children);
        if (others < 0) others = 0;
        int64_t allow = (niv * SWITCH_NS < others ? niv * SWITCH_NS : others) + nv * SWITCH_NS;
        if (wait > others + allow) what |= CB_DISTURB_PREEMPTED;
    }
    if (d->read && r.cpu != d->last.cpu) what |= CB_DISTURB_MIGRATED;
    d->last = r;
    d->read = 1;
    return what;
}

const char *cb_disturb_source(const cb_disturb *d) {
    return !d->ok ? "none" : d->sched_fd >= 0 ? "nivcsw+run_delay" : "nivcsw";
}

void cb_pmu_open(cb_pmu *p) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.exclude_hv = 1; /* the hypervisor's cycles are not the benchmark's */
    p->fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    p->error = p->fd < 0 ? errno : 0;
}

uint64_t cb_pmu_read(const cb_pmu *p) {
    uint64_t v = 0;
    if (p->fd >= 0 && read(p->fd, &v, sizeof v) != (ssize_t)sizeof v) v = 0;
    return v;
}

/* The hard interrupts' entry tracepoints: the generic one every device IRQ passes through, and
 * x86's vectors that bypass it (the local APIC timer, IPIs, irq_work). Absent ones are skipped. */
static const char *const irq_events[CB_IRQ_EVENTS] = {
    "irq/irq_handler_entry",           "irq_vectors/local_timer_entry",
    "irq_vectors/call_function_entry", "irq_vectors/call_function_single_entry",
    "irq_vectors/reschedule_entry",    "irq_vectors/irq_work_entry",
    "irq_vectors/x86_platform_ipi_entry", "irq_vectors/thermal_apic_entry"};

static long tracepoint_id(const char *event) {
    static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    for (size_t i = 0; i < sizeof roots / sizeof *roots; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s/events/%s/id", roots[i], event);
        FILE *f = fopen(path, "re");
        if (!f) continue;
        long id = -1;
        if (fscanf(f, "%ld", &id) != 1) id = -1;
        fclose(f);
        if (id >= 0) return id;
    }
    return -1;
}

void cb_irq_open(cb_irq *q, int cpu) {
    memset(q, 0, sizeof *q);
    q->fd = -1;
    q->cpu = cpu;
    if (cpu < 0) {
        snprintf(q->why, sizeof q->why, "not pinned to one CPU");
        return;
    }
    int err = 0;
    for (int i = 0; i < CB_IRQ_EVENTS; i++) {
        long id = tracepoint_id(irq_events[i]);
        if (id < 0) continue;
        struct perf_event_attr a;
        memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = PERF_TYPE_TRACEPOINT;
        a.config = (uint64_t)id;
        a.read_format = PERF_FORMAT_GROUP;
        int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, q->fd, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            err = errno;
            if (q->fd < 0) break; /* no leader: the others would fail alike */
            continue;
        }
        if (q->fd < 0) q->fd = fd;
        q->nevents++;
    }
    if (q->fd < 0)
        snprintf(q->why, sizeof q->why, "%s", err ? strerror(err) : "no tracefs (mount -t tracefs nodev /sys/kernel/tracing)");
}

uint64_t cb_irq_read(const cb_irq *q) {
    uint64_t buf[1 + CB_IRQ_EVENTS] = {0}, sum = 0;
    if (q->fd < 0 || read(q->fd, buf, sizeof buf) < (ssize_t)sizeof(uint64_t)) return 0;
    for (uint64_t i = 0; i < buf[0] && i < CB_IRQ_EVENTS; i++) sum += buf[1 + i];
    return sum;
}

void cb_irq_close(cb_irq *q) {
    if (q->fd >= 0) close(q->fd); /* the group's members go with the process; the leader stops them counting */
    q->fd = -1;
}
