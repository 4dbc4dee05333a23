/* disturb.c — see disturb.h. */
#define _GNU_SOURCE
#include "disturb.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int perf_open(uint64_t config, int group) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = config;
    a.read_format = PERF_FORMAT_GROUP;
    a.disabled = group < 0; /* the leader starts disabled, members follow it */
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, group, 0);
}

void cb_disturb_open(cb_disturb *d) {
    memset(d, 0, sizeof *d);
    d->fd = perf_open(PERF_COUNT_SW_CONTEXT_SWITCHES, -1);
    if (d->fd >= 0 && perf_open(PERF_COUNT_SW_CPU_MIGRATIONS, d->fd) >= 0 &&
        ioctl(d->fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP) == 0) {
        d->source = 1;
    } else {
        if (d->fd >= 0) close(d->fd);
        d->fd = -1;
        struct rusage ru;
        d->source = getrusage(RUSAGE_THREAD, &ru) == 0 ? 2 : 0;
    }
    cb_disturb_changed(d);
}

int cb_disturb_changed(cb_disturb *d) {
    uint64_t cs = 0, mig = 0;
    if (d->source == 1) {
        uint64_t buf[3]; /* nr, context-switches, cpu-migrations */
        if (read(d->fd, buf, sizeof buf) != (ssize_t)sizeof buf) return 0;
        cs = buf[1];
        mig = buf[2];
    } else if (d->source == 2) {
        struct rusage ru;
        if (getrusage(RUSAGE_THREAD, &ru) != 0) return 0;
        cs = (uint64_t)(ru.ru_nvcsw + ru.ru_nivcsw);
    } else {
        return 0;
    }
    int changed = cs != d->cs || mig != d->mig;
    d->cs = cs;
    d->mig = mig;
    return changed;
}

const char *cb_disturb_source(const cb_disturb *d) {
    return d->source == 1 ? "perf" : d->source == 2 ? "getrusage" : "none";
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
